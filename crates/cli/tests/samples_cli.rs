//! `retroprof samples` end to end: tables (golden files, `RETROPROF_BLESS=1`
//! rewrites them), every writer, exit codes for bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/tests/fixtures")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/tests/golden")
}

fn tmpdir(name: &str) -> PathBuf {
    common::fresh_dir("samples-cli", name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retroprof"))
        .arg("samples")
        .args(args)
        .current_dir(fixtures())
        .output()
        .expect("run retroprof")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn check_golden(name: &str, actual: &str) {
    retroprof_testkit::check_golden_text(&golden_dir().join(name), actual);
}

fn petit_log(dir: &Path) -> PathBuf {
    let mut c = vec![0u16; 65536];
    c[0x0005] = 7;
    c[0x0015] = 10;
    c[0x00C8] = 250;
    c[0x00C9] = 0xFFFF;
    c[0x0140] = 200;
    c[0x01B0] = 100;
    c[0x1300] = 50;
    c[0x1B00] = 20;
    let bytes: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
    let p = dir.join("N2KC.LOG");
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn watcom_two_histograms_table_and_json_golden() {
    let dir = tmpdir("watcom");
    let json = dir.join("n2kc.json");
    let o = run(&[
        "-m",
        "n2kc_wlink.map",
        "--load-segment",
        "1000",
        "n2kc_samples_a.txt",
        "n2kc_samples_b.txt",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_golden("watcom_table.txt", &stdout(&o));
    check_golden("watcom.json", &std::fs::read_to_string(&json).unwrap());
}

#[test]
fn petit_histogram_uses_the_entry_point_segment_and_warns_on_saturation() {
    let dir = tmpdir("petit");
    let log = petit_log(&dir);
    let o = run(&[
        "-m",
        "n2kc_mslink.map",
        log.to_str().unwrap(),
        "--top",
        "4",
        "--hot",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_golden("mslink_petit_table.txt", &stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("_TEXT (frame 0000, the entry point's)"),
        "{out}"
    );
    assert!(out.contains("warning: 1 counter(s) reached 65535"), "{out}");
}

#[test]
fn shift_jis_tlink_map_prints_japanese_names() {
    let dir = tmpdir("sjis");
    let h = dir.join("h.txt");
    std::fs::write(&h, "0000:0710 80\n0000:0900 120\n").unwrap();
    let o = run(&["-m", "n2kc_tlink.map", h.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_golden("tlink_sjis_table.txt", &stdout(&o));
    assert!(stdout(&o).contains("_譜面_読込"));
    assert!(stdout(&o).contains("譜面.C"));
    assert!(
        stdout(&o).contains("_譜面_読込+0x10  (譜面.C:101)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn every_writer_writes_deterministically_and_replaces_named_files() {
    let dir = tmpdir("writers");
    let names = [
        "p.json",
        "p.csv",
        "p.folded",
        "p.pb.gz",
        "p.speedscope.json",
    ];
    let paths: Vec<String> = names
        .iter()
        .map(|n| dir.join(n).to_str().unwrap().to_string())
        .collect();
    // A stale file in the way: named explicitly, so it is replaced.
    std::fs::write(&paths[2], "stale\n").unwrap();
    let mut args: Vec<&str> = vec!["-m", "md_gnuld.map", "md_samples.txt"];
    for (flag, p) in ["--json", "--csv", "--folded", "--pprof", "--speedscope"]
        .iter()
        .zip(&paths)
    {
        args.push(flag);
        args.push(p);
    }
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let first: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let folded = String::from_utf8(first[2].clone()).unwrap();
    assert!(folded.contains("VDP_waitVBlank 500\n"), "{folded}");
    assert!(folded.contains("[outside code segment] 15\n"), "{folded}");
    assert!(!folded.contains("stale"));
    let csv = String::from_utf8(first[1].clone()).unwrap();
    assert!(
        csv.contains("function,VDP_waitVBlank,0x644,libmd.a(vdp.o),500,0.546448,0.555556,"),
        "{csv}"
    );
    assert_eq!(&first[3][..2], &[0x1f, 0x8b], "pprof is gzip");
    let ss = String::from_utf8(first[4].clone()).unwrap();
    assert!(ss.contains("speedscope"), "{ss}");
    // Same input, same bytes.
    let o = run(&args);
    assert!(o.status.success());
    for (p, before) in paths.iter().zip(&first) {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            before,
            "{p} changed between runs"
        );
    }
    // No temporary files left behind.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), names.len());
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let dir = tmpdir("bad");
    let short = dir.join("short.log");
    std::fs::write(&short, vec![0u8; 131_070]).unwrap();
    let log = petit_log(&dir);
    let nodata = dir.join("data.map");
    std::fs::write(
        &nodata,
        " Start  Stop   Length Name  Class\n 00000H 0003FH 00040H _DATA DATA\n\n  Address   Publics by Value\n\n 0000:0010  _table\n",
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["-m", "n2kc_mslink.map", short.to_str().unwrap()],
            "131070 bytes is not a histogram",
        ),
        (
            vec!["-m", "README.md", "md_samples.txt"],
            "not a map format this tool reads; tried",
        ),
        (
            vec![
                "-m",
                "n2kc_mslink.map",
                log.to_str().unwrap(),
                "--segment",
                "_CODE",
            ],
            "--segment `_CODE` matches no segment",
        ),
        (
            vec!["-m", nodata.to_str().unwrap(), "md_samples.txt"],
            "the map has no code symbols",
        ),
        (
            vec![
                "-m",
                "md_gnuld.map",
                "--map-format",
                "borland-c",
                "md_samples.txt",
            ],
            // A value enum: clap refuses it with the list of formats.
            "invalid value 'borland-c' for '--map-format <FORMAT>'\n  [possible values: mslink, tlink, watcom, gnu-ld, nm, cc65-dbg, cc65-map, elf]",
        ),
        (
            vec!["-m", "md_gnuld.map", "no_such_file.txt"],
            "cannot read histogram no_such_file.txt",
        ),
        (
            vec![
                "-m",
                "md_gnuld.map",
                "--hist-format",
                "petit",
                "md_samples.txt",
            ],
            "a Petit Profiler histogram is exactly 131072 bytes",
        ),
    ];
    for (args, want) in cases {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: expected `{want}` in: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn forced_map_format_and_outside_samples_explained() {
    let o = run(&[
        "-m",
        "md_symbol.txt",
        "--map-format",
        "nm",
        "md_samples.txt",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("[outside code segment]"), "{out}");
    assert!(out.contains("0xFF0010"), "{out}");
}

#[test]
fn a_segment_with_no_code_is_warned_about() {
    let dir = tmpdir("noseg");
    let log = petit_log(&dir);
    // Frame 0x01A4 is DGROUP: no code there.
    let o = run(&[
        "-m",
        "n2kc_mslink.map",
        log.to_str().unwrap(),
        "--segment",
        "01A4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("0 attributed to functions"), "{out}");
    assert!(
        out.contains("covers 0x1A40..0x11A40, where the map has no code segment"),
        "{out}"
    );
    assert!(
        out.contains("none of the 66172 samples fell in a code symbol"),
        "{out}"
    );
    // A name works too, and is matched case-insensitively.
    let o = run(&[
        "-m",
        "n2kc_mslink.map",
        log.to_str().unwrap(),
        "--segment",
        "_text",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("66145 attributed"), "{}", stdout(&o));
}

#[test]
fn petit_written_by_the_library_with_a_flat_base_reads_back() {
    // What the Mega Drive sampler will do: write the Petit layout from a
    // histogram (16-bit offsets from a base), then symbolise it.
    use retroprof_samples::histogram::{self, ReadOptions};
    let dir = tmpdir("flat");
    let text = std::fs::read(fixtures().join("md_samples.txt")).unwrap();
    let h = histogram::read("md_samples.txt", &text, None, &ReadOptions::default()).unwrap();
    let log = dir.join("md.petit");
    let mut out = Vec::new();
    let stats = retroprof_samples::write_petit(&h, 0, &mut out).unwrap();
    assert_eq!(
        stats.outside, 5,
        "the RAM samples do not fit a 64 KiB ROM window"
    );
    std::fs::write(&log, out).unwrap();
    let o = run(&["-m", "md_gnuld.map", "--base", "0", log.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("910 samples, 900 attributed"), "{out}");
    assert!(out.contains("VDP_waitVBlank+0xC"), "{out}");
    // Without --base a flat map's Petit window starts at its first code
    // section (.text at 0): the same result.
    let o = run(&["-m", "md_gnuld.map", log.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("910 samples, 900 attributed"),
        "{}",
        stdout(&o)
    );
}
