//! Helpers shared by the acceptance tests (`testroms.rs`, `shared_roms.rs`):
//! paths, RAM symbols, golden screenshot hashes.
//!
//! Golden files hold one line per screenshot: `NAME FRAME WIDTHxHEIGHT HASH`
//! (HASH = `Image::fnv1a` in hex). `RETROPROF_BLESS=1` rewrites the file
//! from the current run; `RETROPROF_DUMP=DIR` writes each screenshot as
//! `DIR/NAME.png` for review.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retroprof_megadrive::render::{write_png, Image};
use retroprof_symbols::{SymbolKind, Symbols};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .canonicalize()
        .expect("repository root")
}

/// `../shared` next to the repository; panics when it is missing.
pub fn shared() -> PathBuf {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"));
    assert!(
        dir.is_dir(),
        "{} is missing: the shared reference material (roms/, reference/) must be present next to the repository",
        dir.display()
    );
    dir.to_path_buf()
}

/// A file that must exist (panics with its path otherwise).
pub fn must_exist(path: PathBuf) -> PathBuf {
    assert!(
        path.is_file(),
        "{} is missing (needed by this acceptance test)",
        path.display()
    );
    path
}

/// Symbols of an nm listing, looked up by name (name, address, is code),
/// sorted by address.
pub struct RamSymbols {
    path: PathBuf,
    syms: Vec<(String, u32, bool)>,
}

impl RamSymbols {
    pub fn load(path: &Path) -> RamSymbols {
        let syms = Symbols::load_nm(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let syms = syms
            .table
            .symbols()
            .iter()
            .map(|s| (s.name.clone(), s.addr as u32, s.kind == SymbolKind::Text))
            .collect();
        RamSymbols {
            path: path.to_path_buf(),
            syms,
        }
    }

    /// Address of the symbol `name` (panics if absent).
    pub fn addr(&self, name: &str) -> u32 {
        self.syms
            .iter()
            .find(|s| s.0 == name)
            .unwrap_or_else(|| panic!("symbol {name} not in {}", self.path.display()))
            .1
    }

    /// [start, end) of the code symbol `name`: it ends at the next code
    /// symbol with a higher address.
    pub fn code_range(&self, name: &str) -> (u32, u32) {
        let start = self.addr(name);
        let end = self
            .syms
            .iter()
            .filter(|s| s.2 && s.1 > start)
            .map(|s| s.1)
            .min()
            .unwrap_or_else(|| panic!("no code symbol after {name}"));
        (start, end)
    }

    /// Bytes from `name` to the next symbol (any kind) at a higher address.
    pub fn span(&self, name: &str) -> u32 {
        let start = self.addr(name);
        let next = self
            .syms
            .iter()
            .filter(|s| s.1 > start)
            .map(|s| s.1)
            .min()
            .unwrap_or_else(|| panic!("no symbol after {name}"));
        next - start
    }

    /// A work RAM address of `name` as an index into the 64 KB work RAM.
    pub fn ram_offset(&self, name: &str) -> usize {
        let a = self.addr(name);
        assert!(
            a >= 0xFF_0000,
            "symbol {name} at {a:06X} is not in work RAM"
        );
        (a & 0xFFFF) as usize
    }
}

/// Big-endian reads from a 64 KB work RAM image.
pub fn ram_u16(wram: &[u8; 0x10000], off: usize) -> u16 {
    u16::from_be_bytes([wram[off], wram[off + 1]])
}

pub fn ram_u32(wram: &[u8; 0x10000], off: usize) -> u32 {
    u32::from_be_bytes([wram[off], wram[off + 1], wram[off + 2], wram[off + 3]])
}

/// One screenshot to check.
pub struct Shot {
    pub name: String,
    pub frame: u64,
    pub image: Image,
}

fn env_set(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty() && v != "0")
}

/// Write the screenshots as PNGs when `RETROPROF_DUMP` names a folder.
pub fn dump(shots: &[Shot]) {
    let Some(dir) = env_set("RETROPROF_DUMP") else {
        return;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for s in shots {
        let p = dir.join(format!("{}.png", s.name));
        write_png(&s.image, &p).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("wrote {}", p.display());
    }
}

/// Check the screenshots against the golden file `tests/golden/FILE`
/// (or rewrite it with `RETROPROF_BLESS=1`).
pub fn check_golden(file: &str, shots: &[Shot]) {
    dump(shots);
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden")).join(file);
    let line = |s: &Shot| {
        format!(
            "{} {} {}x{} {:016x}",
            s.name,
            s.frame,
            s.image.width,
            s.image.height,
            s.image.fnv1a()
        )
    };
    if retroprof_testkit::bless() {
        let mut text = String::from(
            "# NAME FRAME WIDTHxHEIGHT FNV1A64 (Image::fnv1a); rewrite with RETROPROF_BLESS=1\n",
        );
        for s in shots {
            text.push_str(&line(s));
            text.push('\n');
        }
        let tmp = path.with_extension("txt.tmp");
        std::fs::write(&tmp, text).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
        std::fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (create it with RETROPROF_BLESS=1 after checking the pictures with RETROPROF_DUMP=DIR)",
            path.display()
        )
    });
    let mut want: BTreeMap<String, String> = BTreeMap::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let name = l
            .split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("{}:{}: empty line", path.display(), i + 1));
        want.insert(name.to_string(), l.to_string());
    }
    let mut bad = Vec::new();
    for s in shots {
        let got = line(s);
        match want.remove(&s.name) {
            Some(w) if w == got => {}
            Some(w) => bad.push(format!("  want {w}\n  got  {got}")),
            None => bad.push(format!("  no golden line for {got}")),
        }
    }
    for (_, w) in want {
        bad.push(format!("  golden line not produced: {w}"));
    }
    assert!(
        bad.is_empty(),
        "{}: screenshots differ (check with RETROPROF_DUMP=DIR, then bless with RETROPROF_BLESS=1):\n{}",
        path.display(),
        bad.join("\n")
    );
}
