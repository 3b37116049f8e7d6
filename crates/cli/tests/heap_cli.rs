//! `retroprof heap` run as a program.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_retroprof");

/// Leaks: 36 + 20 + 12 + 12 bytes; a double free on line 10, a
/// new[]/delete mismatch on line 11.
const DAEDALUS: &str = "\
Allocating       36 bytes - 09c40620 - RA is 08953a94
Allocating[]   8192 bytes - 09c40a00 - RA is 0895e8bc
Allocating 12 bytes - 09c3fce0 - RA is 08964898
Allocating 12 bytes - 09c40970 - RA is 089648b0
Allocating 12 bytes - 09c409d0 - RA is 089648c8
Allocating 12 bytes - 09c408e0 - RA is 089648e0
Allocating 20 bytes - 091ceb20 - RA is 089645e8
Freeing 09c3fce0 - RA is 08962374
Freeing 09c40970 - RA is 089621fc
Freeing 09c40970 - RA is 089621fc
Freeing 09c40a00 - RA is 089621fc
";

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("retroprof-heap-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("heap").args(args);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run retroprof");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        // A command that refuses stdin may exit before reading it: the
        // write then meets a closed pipe, which is not this test's failure.
        match pipe.write_all(text.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("stdin: {e}"),
            _ => {}
        }
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn report_on_a_daedalus_log() {
    let log = tmp("d.log");
    std::fs::write(&log, DAEDALUS).unwrap();
    let out = run(&[log.to_str().unwrap()], None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("80 B in 4 blocks"), "{stdout}");
    assert!(
        stdout.contains("8,296 B (8.1 KiB) in 7 blocks at event 7, line 7"),
        "{stdout}"
    );
    assert!(stdout.contains("line 10: double free"), "{stdout}");
    assert!(
        stdout.contains("line 11: new/delete[] or new[]/delete mismatch"),
        "{stdout}"
    );
    assert!(!stdout.contains('\x1b'), "no colour when not on a terminal");
}

#[test]
fn standard_input_gives_the_same_report() {
    let log = tmp("same.log");
    std::fs::write(&log, DAEDALUS).unwrap();
    let a = run(&[log.to_str().unwrap()], None);
    let b = run(&["-"], Some(DAEDALUS));
    assert!(b.status.success(), "{}", text(&b.stderr));
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.starts_with("log:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(text(&a.stdout)), strip(text(&b.stdout)));
    assert!(text(&b.stdout).contains("<stdin>"));
}

#[test]
fn strict_makes_a_malformed_line_exit_2_with_file_and_line() {
    let log = tmp("bad.log");
    std::fs::write(&log, "Allocating 4 bytes - 10 - RA is 20\nFreeing x\n").unwrap();
    let out = run(&["--strict", log.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}:2: expected the pointer", log.display())),
        "{err}"
    );
    // Without --strict it is an anomaly with its line.
    let out = run(&[log.to_str().unwrap()], None);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("line 2: malformed line"), "{stdout}");
    assert!(stdout.contains("| Freeing x"), "{stdout}");
}

#[test]
fn bad_arguments_and_missing_files_exit_2() {
    let log = tmp("args.log");
    std::fs::write(&log, DAEDALUS).unwrap();
    for args in [
        vec!["--group", "file", log.to_str().unwrap()],
        vec!["--at", "frame:x", log.to_str().unwrap()],
        vec!["--arch", "z80", log.to_str().unwrap()],
        vec!["--window", "0", log.to_str().unwrap()],
        vec!["/nonexistent/heap.log"],
    ] {
        let out = run(&args, None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = run(&["/nonexistent/heap.log"], None);
    assert!(text(&out.stderr).contains("/nonexistent/heap.log"));
}

#[test]
fn every_output_file_is_written() {
    let log = tmp("out.log");
    let mut body = String::from("retroprof-heap 1 arch=mips\n");
    for f in 1..=20u64 {
        body.push_str(&format!("frame {f}\n"));
        body.push_str(&format!(
            "alloc {} 0x{:x} 0x08950010\n",
            64 * f,
            0x0900_0000 + f * 0x1000
        ));
        body.push_str(&format!(
            "alloc 16 0x{:x} 0x08950020\n",
            0x0910_0000 + f * 0x100
        ));
        body.push_str(&format!(
            "free 0x{:x} 0x08950030\n",
            0x0910_0000 + f * 0x100
        ));
    }
    std::fs::write(&log, body).unwrap();
    let names = ["m.png", "a.json", "d.json", "p.pb.gz", "f.txt", "t.csv"];
    let paths: Vec<PathBuf> = names.iter().map(|n| tmp(n)).collect();
    // An existing file the user names is replaced.
    std::fs::write(&paths[1], "old").unwrap();
    let p = |i: usize| paths[i].to_str().unwrap().to_string();
    let out = run(
        &[
            log.to_str().unwrap(),
            "--quiet",
            "--png",
            &p(0),
            "--json",
            &p(1),
            "--dhat",
            &p(2),
            "--pprof",
            &p(3),
            "--folded",
            &p(4),
            "--csv",
            &p(5),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let png = std::fs::read(&paths[0]).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let json = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(json.contains("\"format\": \"retroprof-heap\""));
    assert!(
        json.contains("\"live_bytes\": 13440"),
        "64 * (1 + ... + 20) leaked"
    );
    let dhat = std::fs::read_to_string(&paths[2]).unwrap();
    assert!(dhat.contains("\"dhatFileVersion\":2"), "{dhat}");
    assert!(dhat.contains("\"0x8950010: ???\""), "{dhat}");
    assert!(dhat.contains("\"tu\":\"frames\""));
    let pprof = std::fs::read(&paths[3]).unwrap();
    assert_eq!(&pprof[..2], b"\x1f\x8b");
    let folded = std::fs::read_to_string(&paths[4]).unwrap();
    assert!(folded.contains("0x08950010 13440"), "{folded}");
    assert!(folded.contains("0x08950020 320"), "{folded}");
    let csv = std::fs::read_to_string(&paths[5]).unwrap();
    assert_eq!(csv.lines().count(), 21, "a header and one row per frame");
    assert!(csv
        .lines()
        .nth(20)
        .unwrap()
        .starts_with("19,20,58,3,2,1,1296,16,13440,20,"));
}

#[test]
fn sgdk_symbols_name_the_call_sites() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/roms/platformer"
    );
    let nm = format!("{dir}/symbol.txt");
    assert!(
        std::path::Path::new(&nm).exists(),
        "missing {nm}: the shared folder (../shared) must be beside the repository"
    );
    let log = "\
frame 1
alloc 1024 0xff1000 0x796
alloc 64 0xff1400 0x5adc
";
    let out = run(&["--arch", "m68k", "--symbols", &nm, "-"], Some(log));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("main"), "{stdout}");
    assert!(stdout.contains("MAP_create"), "{stdout}");
    // The ELF gives the architecture itself.
    let elf = format!("{dir}/rom.out");
    let out = run(&["--symbols", &elf, "--group", "address", "-"], Some(log));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("arch m68k"), "{stdout}");
    assert!(stdout.contains("MAP_create @0x5adc"), "{stdout}");
}

#[test]
fn at_peak_reads_the_file_twice_and_refuses_stdin() {
    let log = tmp("peak.log");
    std::fs::write(&log, DAEDALUS).unwrap();
    let png = tmp("peak.png");
    let out = run(
        &[
            log.to_str().unwrap(),
            "--at",
            "peak",
            "--png",
            png.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("== Live set after event 7 =="), "{stdout}");
    assert!(std::fs::metadata(&png).unwrap().len() > 100);
    let out = run(&["--at", "peak", "-"], Some(DAEDALUS));
    assert_eq!(out.status.code(), Some(2));
}
