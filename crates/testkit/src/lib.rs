//! Test helpers shared by the workspace's tests: golden files with one
//! bless switch, and a minimal protobuf decoder ([`protobuf`]) for the
//! tests that read our pprof files back.
//!
//! A golden file holds an output the tests compare against. Run the tests
//! with `RETROPROF_BLESS=1` (exactly `1`; any other value, or none,
//! compares) to rewrite the golden files from the new outputs instead, then
//! review the diff before committing: regenerate only what you can explain.

pub mod protobuf;

use std::path::{Path, PathBuf};

/// The environment variable of the bless switch.
pub const BLESS_VAR: &str = "RETROPROF_BLESS";

/// Whether the golden files are being rewritten (`RETROPROF_BLESS=1`).
pub fn bless() -> bool {
    std::env::var_os(BLESS_VAR).is_some_and(|v| v == "1")
}

/// The golden file `name` under the crate's `tests/golden` folder (pass
/// `env!("CARGO_MANIFEST_DIR")`).
pub fn golden_path(manifest_dir: &str, name: &str) -> PathBuf {
    Path::new(manifest_dir).join("tests/golden").join(name)
}

/// Compare `got` with the golden file at `path`, or (blessing) write it
/// there, whole: a temporary file renamed over the old one. On a
/// difference the new output is written beside it as `PATH.got` and the
/// test fails naming the first differing line (or byte, for binary data).
pub fn check_golden(path: &Path, got: &[u8]) {
    if bless() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        let tmp = with_suffix(path, ".tmp");
        std::fs::write(&tmp, got).unwrap_or_else(|e| panic!("{}: {e}", tmp.display()));
        std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let want = std::fs::read(path).unwrap_or_else(|e| {
        panic!(
            "golden file {}: {e} (run the test with {BLESS_VAR}=1 to create it)",
            path.display()
        )
    });
    if want == got {
        return;
    }
    let got_path = with_suffix(path, ".got");
    std::fs::write(&got_path, got).unwrap_or_else(|e| panic!("{}: {e}", got_path.display()));
    panic!(
        "{} differs from the golden file ({}); new output in {} ({BLESS_VAR}=1 accepts it)",
        path.display(),
        first_difference(&want, got),
        got_path.display()
    );
}

/// [`check_golden`] for text.
pub fn check_golden_text(path: &Path, got: &str) {
    check_golden(path, got.as_bytes())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Where two outputs first differ: a line with both versions for text, a
/// byte offset otherwise.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    if let (Ok(w), Ok(g)) = (std::str::from_utf8(want), std::str::from_utf8(got)) {
        for (i, (a, b)) in w.lines().zip(g.lines()).enumerate() {
            if a != b {
                return format!("line {}:\nwant: {a}\ngot:  {b}\n", i + 1);
            }
        }
        return format!(
            "{} lines wanted, {} produced",
            w.lines().count(),
            g.lines().count()
        );
    }
    match want.iter().zip(got).position(|(a, b)| a != b) {
        Some(i) => format!("first differing byte at offset {i}"),
        None => format!("{} bytes wanted, {} produced", want.len(), got.len()),
    }
}

mod alloc;
mod rng;
pub use alloc::{peak_during, CountingAlloc};
pub use rng::SplitMix64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_named() {
        assert_eq!(
            first_difference(b"a\nb\n", b"a\nc\n"),
            "line 2:\nwant: b\ngot:  c\n"
        );
        assert_eq!(
            first_difference(b"a\n", b"a\nb\n"),
            "1 lines wanted, 2 produced"
        );
        assert_eq!(
            first_difference(&[0, 1, 0xFF], &[0, 2, 0xFF]),
            "first differing byte at offset 1"
        );
    }

    #[test]
    fn golden_round_trip() {
        if bless() {
            return; // blessing rewrites instead of comparing
        }
        let dir = std::env::temp_dir().join(format!("retroprof-testkit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.txt");
        std::fs::write(&p, "x\n").unwrap();
        check_golden_text(&p, "x\n");
        let r = std::panic::catch_unwind(|| check_golden_text(&p, "y\n"));
        assert!(r.is_err());
        assert_eq!(
            std::fs::read_to_string(with_suffix(&p, ".got")).unwrap(),
            "y\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
