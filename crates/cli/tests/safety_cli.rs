//! Issue 21 against the binary: nothing a user gave is overwritten (inputs,
//! device nodes, FIFOs), outputs are checked before the run, `run x.srm
//! --sram` keeps the ROM, standard-stream errors end cleanly, and hostile
//! inputs (FIFOs, NUL floods, out-of-range options) get clear errors.
//!
//! Every file, FIFO and device node is made here in a temporary folder; the
//! system's /dev is never used.
#![cfg(unix)]

mod common;

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_retroprof");

fn retroprof(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run retroprof")
}

fn tmp(name: &str) -> PathBuf {
    common::fresh_dir("safety-cli", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A 64 KB ROM that spins at its reset vector.
fn spin_rom() -> Vec<u8> {
    let mut r = vec![0u8; 0x10000];
    r[0..4].copy_from_slice(&0x00FF_FE00u32.to_be_bytes());
    r[4..8].copy_from_slice(&0x0000_0200u32.to_be_bytes());
    r[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    r[0x1F0] = b'U';
    r[0x200..0x202].copy_from_slice(&0x60FEu16.to_be_bytes()); // bra.s *
    r
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn assert_refused(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(o));
    let e = stderr(o);
    assert!(
        e.contains("refusing") || e.contains("same file"),
        "{what}: {e}"
    );
}

#[test]
fn outputs_that_are_inputs_are_refused_before_running() {
    let d = tmp("inputs");
    let rom = d.join("game.bin");
    fs::write(&rom, spin_rom()).unwrap();
    let syms = d.join("game.txt");
    fs::write(&syms, "00000200 T main\n").unwrap();
    let link = d.join("alias.bin");
    std::os::unix::fs::symlink(&rom, &link).unwrap();
    let (r, y, l) = (s(&rom), s(&syms), s(&link));
    let shot = format!("0:{r}");
    let cases: Vec<Vec<&str>> = vec![
        vec!["profile", r, "--frames", "1", "--json", r],
        vec!["profile", r, "--frames", "1", "--heap", r],
        vec!["profile", r, "--frames", "1", "--sample-histogram", r],
        vec!["profile", r, "--frames", "1", "--symbols", y, "--csv", y],
        vec!["profile", r, "--frames", "1", "--symbols", y, "--trace", y],
        vec!["profile", r, "--frames", "1", "--html", l],
        vec!["run", r, "--frames", "1", "--screenshot", &shot],
    ];
    for c in cases {
        let o = retroprof(&c);
        assert_refused(&o, &c.join(" "));
        assert!(stderr(&o).contains("is the ROM") || stderr(&o).contains("--symbols"));
    }
    assert_eq!(fs::read(&rom).unwrap(), spin_rom());
    assert_eq!(fs::read_to_string(&syms).unwrap(), "00000200 T main\n");

    // heap: the log; samples: the map and a histogram.
    let log = d.join("heap.log");
    fs::write(&log, "alloc 4 0x10 0x20\n").unwrap();
    let map = d.join("prog.txt");
    fs::write(&map, "00000000 T main\n").unwrap();
    let hist = d.join("h.txt");
    fs::write(&hist, "0x10 5\n").unwrap();
    let (lg, mp, hs) = (s(&log), s(&map), s(&hist));
    for c in [
        vec!["heap", lg, "--json", lg],
        vec!["heap", lg, "--symbols", mp, "--csv", mp],
        vec!["samples", hs, "--map", mp, "--json", mp],
        vec!["samples", hs, "--map", mp, "--csv", hs],
    ] {
        assert_refused(&retroprof(&c), &c.join(" "));
    }
    assert_eq!(fs::read_to_string(&log).unwrap(), "alloc 4 0x10 0x20\n");
    assert_eq!(fs::read_to_string(&map).unwrap(), "00000000 T main\n");
    assert_eq!(fs::read_to_string(&hist).unwrap(), "0x10 5\n");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn two_outputs_on_one_path_and_missing_folders_are_refused() {
    let d = tmp("dups");
    let rom = d.join("game.bin");
    fs::write(&rom, spin_rom()).unwrap();
    let a = d.join("a.out");
    let o = retroprof(&[
        "profile",
        s(&rom),
        "--frames",
        "1",
        "--csv",
        s(&a),
        "--json",
        s(&a),
    ]);
    assert_refused(&o, "--csv a --json a");
    assert!(!a.exists());
    let o = retroprof(&["heap", s(&rom), "--json", s(&a), "--dhat", s(&a)]);
    assert_refused(&o, "heap --json a --dhat a");
    // A missing folder is found before the run, not after it.
    let far = d.join("no/such/dir/r.json");
    let o = retroprof(&["profile", s(&rom), "--frames", "100000", "--json", s(&far)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    let shot = format!("1:{}", s(&far));
    let o = retroprof(&["run", s(&rom), "--frames", "2", "--screenshot", &shot]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fifos_and_device_nodes_are_written_in_place() {
    let d = tmp("nodes");
    let rom = d.join("game.bin");
    fs::write(&rom, spin_rom()).unwrap();
    let fifo = d.join("csv.fifo");
    mkfifo(&fifo);
    let f2 = fifo.clone();
    let reader = std::thread::spawn(move || fs::read_to_string(&f2).unwrap());
    let o = retroprof(&["profile", s(&rom), "--frames", "2", "--csv", s(&fifo)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = reader.join().unwrap();
    assert!(csv.lines().count() >= 3, "{csv}");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    if is_root() {
        let null = d.join("null");
        assert!(Command::new("mknod")
            .arg(&null)
            .args(["c", "1", "3"])
            .status()
            .unwrap()
            .success());
        let shot = format!("0:{}", s(&null));
        let o = retroprof(&["run", s(&rom), "--frames", "1", "--screenshot", &shot]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = retroprof(&[
            "profile",
            s(&rom),
            "--frames",
            "1",
            "--csv",
            s(&null),
            "--json",
            s(&null),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(fs::symlink_metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device());
    }
    let names: Vec<_> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")),
        "{names:?}"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sram_never_overwrites_a_rom_named_srm() {
    let d = tmp("srm");
    let rom = d.join("game.srm");
    // The SRAM ROM of run_cli.rs: 32 KB of odd-byte SRAM the game writes.
    let mut r = spin_rom();
    r[0x1B0..0x1B4].copy_from_slice(&[b'R', b'A', 0xF8, 0x20]);
    r[0x1B4..0x1B8].copy_from_slice(&0x0020_0001u32.to_be_bytes());
    r[0x1B8..0x1BC].copy_from_slice(&0x0020_FFFFu32.to_be_bytes());
    let code: [u16; 8] = [
        0x1039, 0x0020, 0x0001, 0x5200, 0x13C0, 0x0020, 0x0001, 0x60FE,
    ];
    for (i, w) in code.iter().enumerate() {
        r[0x200 + 2 * i..0x202 + 2 * i].copy_from_slice(&w.to_be_bytes());
    }
    fs::write(&rom, &r).unwrap();
    let o = retroprof(&["run", s(&rom), "--frames", "2", "--sram"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&rom).unwrap(), r, "the ROM was overwritten");
    let save = d.join("game.srm.srm");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("game.srm.srm"), "{text}");
    assert!(save.exists());
    // A save file that is a link to the ROM is refused.
    let rom2 = d.join("other.bin");
    fs::write(&rom2, &r).unwrap();
    std::os::unix::fs::symlink(&rom2, d.join("other.srm")).unwrap();
    let o = retroprof(&["run", s(&rom2), "--frames", "2", "--sram"]);
    assert_refused(&o, "other.srm -> other.bin");
    assert_eq!(fs::read(&rom2).unwrap(), r);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let d = tmp("pipe");
    let rom = d.join("game.bin");
    fs::write(&rom, spin_rom()).unwrap();
    let log = d.join("heap.log");
    fs::write(&log, "alloc 4 0x10 0x20\n".repeat(1000)).unwrap();
    for args in [
        vec!["run", s(&rom), "--frames", "3"],
        vec!["profile", s(&rom), "--frames", "3"],
        vec!["heap", s(&log)],
    ] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away at once
        let o = child.wait_with_output().unwrap();
        let e = stderr(&o);
        assert!(
            !e.contains("panicked") && !e.contains("Broken pipe"),
            "{args:?}: {e}"
        );
        assert!(
            o.status.success() || o.status.signal() == Some(13),
            "{args:?}: {:?} {e}",
            o.status
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

/// Standard output on a file that cannot grow (RLIMIT_FSIZE 0 with SIGXFSZ
/// ignored: every write fails with EFBIG), as a full disk fails.
fn with_unwritable_stdout(args: &[&str], out: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\" > \"$OUT\"")
        .arg(BIN)
        .args(args)
        .env("OUT", out)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn stdout_write_errors_are_one_line_and_non_zero() {
    let d = tmp("full");
    let rom = d.join("game.bin");
    fs::write(&rom, spin_rom()).unwrap();
    let log = d.join("heap.log");
    fs::write(&log, "alloc 4 0x10 0x20\n").unwrap();
    let map = d.join("prog.txt");
    fs::write(&map, "00000000 T main\n").unwrap();
    let hist = d.join("h.txt");
    fs::write(&hist, "0x10 5\n").unwrap();
    let out = d.join("stdout.txt");
    for args in [
        vec!["run", s(&rom), "--frames", "2"],
        vec!["profile", s(&rom), "--frames", "2"],
        vec!["heap", s(&log)],
        vec!["samples", s(&hist), "--map", s(&map)],
    ] {
        let o = with_unwritable_stdout(&args, &out);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        let lines: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {e}");
        assert!(
            lines[0].contains("writing standard output"),
            "{args:?}: {e}"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn rom_from_a_fifo_is_refused_without_reading() {
    let d = tmp("romfifo");
    let fifo = d.join("endless.bin");
    mkfifo(&fifo);
    // Nobody writes the FIFO: opening it to read would block forever.
    let o = retroprof(&["run", s(&fifo), "--frames", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn heap_nul_flood_is_bounded_and_named() {
    let d = tmp("nul");
    let log = d.join("nul.log");
    let mut data = b"alloc 4 0x10 0x20\n".to_vec();
    data.extend(std::iter::repeat_n(0u8, 4 << 20));
    data.extend_from_slice(b"\nfree 0x10 0x30\n");
    fs::write(&log, &data).unwrap();
    let json = d.join("r.json");
    let o = retroprof(&["heap", s(&log), "--json", s(&json)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("longer than"), "{text}");
    assert!(
        fs::metadata(&json).unwrap().len() < 64 << 10,
        "the JSON echoes the line"
    );
    let o = retroprof(&["heap", s(&log), "--strict"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(":2: line of"), "{}", stderr(&o));
    assert!(stderr(&o).len() < 400, "{}", stderr(&o));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn numeric_options_are_range_checked() {
    let d = tmp("numbers");
    let rom = d.join("game.bin");
    fs::write(&rom, spin_rom()).unwrap();
    let log = d.join("heap.log");
    fs::write(&log, "alloc 4 0x10 0x20\n").unwrap();
    let r = s(&rom);
    for args in [
        vec!["heap", s(&log), "--header", "18446744073709551615"],
        vec!["heap", s(&log), "--align", "18446744073709551615"],
        vec!["profile", r, "--frames", "1", "--fail-over-load", "NaN"],
        vec!["profile", r, "--frames", "1", "--fail-over-load", "inf"],
        vec!["profile", r, "--frames", "1", "--fail-over-load", "-1"],
        vec!["profile", r, "--frames", "1", "--watch", "0x1FF0000"],
        vec!["profile", r, "--frames", "1", "--watch", "0x+FF0000"],
        vec!["profile", r, "--frames", "1", "--input", "+5:R"],
        vec!["run", r, "--frames", "1", "--input", "0:"],
        vec![
            "profile",
            r,
            "--frames",
            "1",
            "--sample-histogram",
            "x",
            "--sample-hz",
            "0",
        ],
    ] {
        let o = retroprof(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?} accepted: {}",
            stderr(&o)
        );
        assert!(stderr(&o).starts_with("error:"), "{args:?}: {}", stderr(&o));
    }
    fs::remove_dir_all(&d).unwrap();
}
