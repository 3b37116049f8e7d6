//! The command-line conventions every subcommand follows (issue 20): long
//! help with exit codes, formats and examples, wrapped to the terminal;
//! `--color` and NO_COLOR; `-q/--quiet`; `-` for standard output and
//! input; value enums; `completions` and `man`; `run --json`.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_retroprof");

/// A Daedalus-tracker allocation log (one leak, one free).
const LOG: &str = "\
Allocating       36 bytes - 09c40620 - RA is 08953a94
Allocating 12 bytes - 09c3fce0 - RA is 08964898
Freeing 09c3fce0 - RA is 08962374
";

fn tmp(name: &str) -> PathBuf {
    common::fresh_dir("conventions-cli", name)
}

/// Run retroprof with `args`, standard input `stdin` (none: empty), and
/// NO_COLOR / COLUMNS removed unless `env` sets them.
fn run_env(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run retroprof");
    if let Some(data) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(data);
    }
    child.wait_with_output().expect("wait for retroprof")
}

fn run(args: &[&str]) -> Output {
    run_env(args, None, &[])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
}

fn has_escape(b: &[u8]) -> bool {
    b.contains(&0x1b)
}

fn log_file(dir: &Path) -> PathBuf {
    let p = dir.join("alloc.log");
    std::fs::write(&p, LOG).unwrap();
    p
}

fn samples_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/tests/fixtures")
}

const SUBCOMMANDS: [&str; 5] = ["run", "profile", "heap", "samples", "diff"];

/// Each subcommand's `--help` shows its long help (not the one-line
/// summary): exit codes, its input formats and an Examples section;
/// `retroprof help X` shows the same.
#[test]
fn long_help_shows_exit_codes_formats_and_examples() {
    let must: [(&str, &[&str]); 5] = [
        (
            "run",
            &[
                "Exit codes:",
                "UDLRABCSXYZM",
                "S = Start",
                "M = Mode",
                "retroprof-run/1",
            ],
        ),
        (
            "profile",
            &[
                "Exit codes:",
                "UDLRABCSXYZM",
                "3 a --fail-* gate tripped",
                "Running the ROM",
            ],
        ),
        (
            "heap",
            &[
                "Exit codes:",
                "Allocating 36 bytes",
                "alloc SIZE PTR CALLER",
                "standard input",
            ],
        ),
        (
            "samples",
            &["Exit codes:", "Petit Profiler", "PROFIL", "ADDRESS COUNT"],
        ),
        (
            "diff",
            &["Exit codes:", "3 a --fail-* gate tripped", "UDLRABCSXYZM"],
        ),
    ];
    for (sub, needles) in must {
        let o = run(&[sub, "--help"]);
        ok(&o);
        // Wrapping may break a line inside a phrase: compare with
        // whitespace folded.
        let help = text(&o.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for n in needles
            .iter()
            .chain(&["Examples:", "--color <WHEN>", "-q, --quiet"])
        {
            assert!(
                help.contains(n),
                "`retroprof {sub} --help` lacks {n:?}:\n{help}"
            );
        }
        assert!(
            help.contains(&format!("retroprof {sub}")),
            "{sub}: no example"
        );
        let via_help = run(&["help", sub]);
        ok(&via_help);
        assert_eq!(via_help.stdout, o.stdout, "`retroprof help {sub}` differs");
        // -h is the short form: the one-line summary, no examples.
        let short = text(&run(&[sub, "-h"]).stdout);
        assert!(!short.contains("Examples:"), "{sub} -h:\n{short}");
    }
}

/// Help is wrapped to the terminal width (COLUMNS when standard output is
/// not a terminal): no line of any long help is wider than 80 columns.
#[test]
fn help_is_wrapped_to_the_terminal_width() {
    for sub in SUBCOMMANDS.iter().chain(&["completions", "man"]) {
        let o = run_env(&[sub, "--help"], None, &[("COLUMNS", "80")]);
        ok(&o);
        let help = text(&o.stdout);
        for line in help.lines() {
            assert!(
                line.chars().count() <= 80,
                "{sub} --help: a line of {} columns:\n{line}",
                line.chars().count()
            );
        }
        // Each example fits on its line (a wrapped command cannot be
        // copied): every line after "Examples:" is a whole command.
        let examples = help
            .split_once("Examples:\n")
            .expect("an Examples section")
            .1;
        for line in examples.lines().filter(|l| !l.trim().is_empty()) {
            assert!(
                ["  retroprof ", "  echo ", "  zcat "]
                    .iter()
                    .any(|p| line.starts_with(p)),
                "{sub} --help: an example wrapped at 80 columns: {line:?}"
            );
        }
    }
    let o = run_env(&["--help"], None, &[("COLUMNS", "80")]);
    let help = text(&o.stdout);
    assert!(help.lines().all(|l| l.chars().count() <= 80));
    let examples = help
        .split_once("Examples:\n")
        .expect("an Examples section")
        .1;
    assert!(examples
        .lines()
        .all(|l| l.starts_with("  retroprof ") || l.starts_with("  echo ")));
}

/// Enumerated options list their values in help and refuse others with a
/// usage error (exit code 2) naming the possible values.
#[test]
fn enumerated_options_list_their_values() {
    let help = text(&run(&["heap", "--help"]).stdout);
    for v in [
        "function",
        "line",
        "address",
        "mips",
        "m68k",
        "alloc_space",
        "inuse_objects",
    ] {
        assert!(help.contains(v), "heap --help lacks {v}");
    }
    let help = text(&run(&["samples", "--help"]).stdout);
    for v in [
        "mslink", "tlink", "watcom", "gnu-ld", "cc65-dbg", "elf", "petit", "prf",
    ] {
        assert!(help.contains(v), "samples --help lacks {v}");
    }
    let help = text(&run(&["profile", "--help"]).stdout);
    for v in ["petit", "text", "handler", "interrupted", "ntsc", "pal"] {
        assert!(help.contains(v), "profile --help lacks {v}");
    }
    for (args, want) in [
        (&["heap", "--group", "file", "x.log"][..], "function"),
        (&["heap", "--arch", "z80", "x.log"][..], "m68k"),
        (
            &["heap", "--folded-value", "bytes", "x.log"][..],
            "alloc_space",
        ),
        (&["profile", "--sample-format", "prf"][..], "petit"),
        (
            &["samples", "--map-format", "foo", "-m", "m", "h"][..],
            "gnu-ld",
        ),
        (&["profile", "--color", "sometimes"][..], "always"),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(want),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // Aliases the libraries take are still accepted.
    let d = tmp("aliases");
    let log = log_file(&d);
    ok(&run(&[
        "heap",
        "--arch",
        "psp",
        "-q",
        log.to_str().unwrap(),
    ]));
}

/// `--color never` and NO_COLOR give no escape codes; `--color always`
/// gives them (even into a pipe, and over NO_COLOR); the option works
/// before or after the subcommand.
#[test]
fn color_always_never_and_no_color() {
    let d = tmp("color");
    let log = log_file(&d);
    let log = log.to_str().unwrap();
    let cases: [&[&str]; 2] = [&["profile", "-n", "20"], &["heap", log]];
    for base in cases {
        let with = |extra: &[&str], env: &[(&str, &str)]| {
            let mut a: Vec<&str> = base.to_vec();
            a.extend_from_slice(extra);
            let o = run_env(&a, None, env);
            ok(&o);
            o
        };
        assert!(
            !has_escape(&with(&["--color", "never"], &[]).stdout),
            "{base:?}"
        );
        assert!(
            !has_escape(&with(&[], &[("NO_COLOR", "1")]).stdout),
            "{base:?}"
        );
        assert!(
            !has_escape(&with(&[], &[]).stdout),
            "{base:?}: colour into a pipe"
        );
        assert!(
            has_escape(&with(&["--color", "always"], &[]).stdout),
            "{base:?}"
        );
        assert!(
            has_escape(&with(&["--color=always"], &[("NO_COLOR", "1")]).stdout),
            "{base:?}"
        );
        let mut before = vec!["--color", "always"];
        before.extend_from_slice(base);
        let o = run(&before);
        ok(&o);
        assert!(has_escape(&o.stdout), "--color before {base:?}");
    }
    // diff, from two reports of the demo.
    let json = d.join("demo.json");
    ok(&run(&[
        "profile",
        "-q",
        "-n",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]));
    let j = json.to_str().unwrap();
    let o = run(&["diff", j, j, "--color", "always"]);
    ok(&o);
    assert!(has_escape(&o.stdout));
    let o = run(&["diff", j, j, "--color", "never"]);
    ok(&o);
    assert!(!has_escape(&o.stdout));
}

/// `--csv -` writes the CSV to standard output and nothing else there
/// (the report goes to standard error), byte for byte what `--csv FILE`
/// writes; two outputs on `-` are refused.
#[test]
fn dash_writes_one_output_to_stdout_and_the_report_to_stderr() {
    let d = tmp("dash");
    let file = d.join("frames.csv");
    let o = run(&["profile", "-n", "30", "--csv", file.to_str().unwrap()]);
    ok(&o);
    let want = std::fs::read(&file).unwrap();
    assert!(text(&o.stdout).contains("built-in demo"));
    let o = run(&["profile", "-n", "30", "--csv", "-"]);
    ok(&o);
    assert_eq!(text(&o.stdout), text(&want));
    assert!(
        text(&o.stderr).contains("built-in demo"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stderr).contains("_Entry_Point"),
        "the report goes to stderr"
    );
    assert!(!d.join("-").exists());
    // Also --json - and heap's --csv -.
    let o = run(&["profile", "-n", "10", "--json", "-"]);
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON");
    assert_eq!(v["schema"], "retroprof-mdprof-report/1");
    let log = log_file(&d);
    let o = run(&["heap", log.to_str().unwrap(), "--json", "-"]);
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("heap JSON on stdout");
    assert!(v.is_object());
    assert!(
        text(&o.stderr).to_lowercase().contains("leak"),
        "{}",
        text(&o.stderr)
    );
    // Only one output may be `-`.
    for args in [
        &["profile", "--csv", "-", "--json", "-"][..],
        &["heap", log.to_str().unwrap(), "--csv", "-", "--json", "-"][..],
        &["run", "--json", "-", "--screenshot", "1:-"][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains("only one output can be `-`"),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// Standard output appended to an input (`>> alloc.log`) is refused: the
/// input would be written while it is read.
#[test]
fn dash_onto_an_input_is_refused() {
    let d = tmp("dash-input");
    let log = log_file(&d);
    let f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let o = Command::new(BIN)
        .args(["heap", log.to_str().unwrap(), "--json", "-"])
        .stdin(Stdio::null())
        .stdout(Stdio::from(f))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("refusing to overwrite an input"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), LOG);
}

/// `-` reads standard input: a histogram for `samples`, a report for
/// `diff`, the log for `heap` (as before).
#[test]
fn dash_reads_standard_input() {
    let fx = samples_fixtures();
    let hist = std::fs::read(fx.join("md_samples.txt")).unwrap();
    let map = fx.join("md_gnuld.map");
    let m = map.to_str().unwrap();
    let from_file = run(&[
        "samples",
        "-m",
        m,
        fx.join("md_samples.txt").to_str().unwrap(),
    ]);
    ok(&from_file);
    let from_stdin = run_env(&["samples", "-m", m, "-"], Some(&hist), &[]);
    ok(&from_stdin);
    let strip = |o: &Output| {
        text(&o.stdout)
            .lines()
            .filter(|l| !l.contains("md_samples.txt") && !l.contains("standard input"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&from_stdin), strip(&from_file));
    let o = run_env(&["samples", "-m", m, "-", "-"], Some(&hist), &[]);
    assert_eq!(o.status.code(), Some(2));

    let d = tmp("stdin");
    let json = d.join("demo.json");
    ok(&run(&[
        "profile",
        "-q",
        "-n",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]));
    let bytes = std::fs::read(&json).unwrap();
    let o = run_env(&["diff", json.to_str().unwrap(), "-"], Some(&bytes), &[]);
    ok(&o);
    let o = run_env(
        &["profile", "-n", "10", "--baseline", "-"],
        Some(&bytes),
        &[],
    );
    ok(&o);
    assert!(text(&o.stdout).contains("(0 of"), "{}", text(&o.stdout));
    let o = run_env(&["diff", "-", "-"], Some(&bytes), &[]);
    assert_eq!(o.status.code(), Some(2));
    let o = run_env(
        &["diff", json.to_str().unwrap(), "-"],
        Some(b"{\"not\": 1}"),
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("standard input"),
        "{}",
        text(&o.stderr)
    );

    let log = log_file(&d);
    let o = run_env(
        &["heap", "-", "-q", "--csv", "-"],
        Some(LOG.as_bytes()),
        &[],
    );
    ok(&o);
    let from_file = run(&["heap", log.to_str().unwrap(), "-q", "--csv", "-"]);
    assert_eq!(o.stdout, from_file.stdout);
}

/// `-q` silences the report, the progress and the notes; outputs asked
/// for are still written, errors still shown.
#[test]
fn quiet_silences() {
    let d = tmp("quiet");
    let csv = d.join("f.csv");
    let o = run(&["profile", "-q", "-n", "10", "--csv", csv.to_str().unwrap()]);
    ok(&o);
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    assert!(csv.exists());
    let log = log_file(&d);
    for args in [
        &["run", "-n", "5", "--quiet"][..],
        &["heap", log.to_str().unwrap(), "-q"][..],
        &["-q", "heap", log.to_str().unwrap()][..],
    ] {
        let o = run(args);
        ok(&o);
        assert!(o.stdout.is_empty() && o.stderr.is_empty(), "{args:?}");
    }
    let o = run(&["profile", "-q", "-n", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--frames must be at least 1"));
}

/// `run --json FILE|-`: the summary as JSON (schema retroprof-run/1).
#[test]
fn run_json_summary() {
    let d = tmp("run-json");
    let p = d.join("run.json");
    let o = run(&["run", "-n", "12", "--json", p.to_str().unwrap()]);
    ok(&o);
    assert!(
        text(&o.stdout).contains("frames: 12"),
        "{}",
        text(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    assert_eq!(v["schema"], "retroprof-run/1");
    assert_eq!(v["frames_requested"], 12);
    assert_eq!(v["frames_run"], 12);
    assert_eq!(v["tv"], "NTSC");
    assert_eq!(v["sram"], "off");
    assert!(v["stopped"].is_null());
    assert!(v["emulated_s"].as_f64().unwrap() > 0.19 && v["emulated_s"].as_f64().unwrap() < 0.21);
    assert!(v["rom"]["bytes"].as_u64().unwrap() > 0);
    let o = run(&["run", "-n", "3", "--region", "pal", "--json", "-"]);
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON");
    assert_eq!(v["frames_run"], 3);
    assert_eq!(v["tv"], "PAL");
    assert!(
        text(&o.stderr).contains("frames: 3"),
        "the summary goes to stderr"
    );
}

/// `retroprof completions SHELL` for bash, zsh and fish: each names every
/// subcommand and their options; the bash script parses (`bash -n`).
#[test]
fn completions_for_bash_zsh_fish() {
    let d = tmp("completions");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(&["completions", shell]);
        ok(&o);
        let s = text(&o.stdout);
        for sub in SUBCOMMANDS {
            assert!(s.contains(sub), "{shell}: no {sub}");
        }
        for opt in ["--frames", "--folded-value", "--trace-frames", "--color"] {
            assert!(s.contains(opt.trim_start_matches('-')), "{shell}: no {opt}");
        }
        let f = d.join(format!("retroprof.{shell}"));
        std::fs::write(&f, &o.stdout).unwrap();
        if shell == "bash" {
            assert!(s.contains("complete -F"), "{s}");
            let check = Command::new("bash")
                .arg("-n")
                .arg(&f)
                .output()
                .expect("bash");
            assert!(check.status.success(), "bash -n: {}", text(&check.stderr));
        }
        if shell == "zsh" {
            assert!(
                s.starts_with("#compdef retroprof"),
                "{}",
                &s[..40.min(s.len())]
            );
        }
        if shell == "fish" {
            assert!(s.contains("complete -c retroprof"));
            // Value enums complete their values.
            assert!(s.contains("alloc_space") && s.contains("gnu-ld"));
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `retroprof man` prints roff; `man SUB` a subcommand's page; `--dir`
/// writes one page per command.
#[test]
fn man_pages() {
    let o = run(&["man"]);
    ok(&o);
    let s = text(&o.stdout);
    assert!(s.contains(".TH retroprof 1"), "{}", &s[..200.min(s.len())]);
    assert!(s.contains("profile"));
    let o = run(&["man", "profile"]);
    ok(&o);
    let s = text(&o.stdout);
    assert!(
        s.contains(".TH retroprof-profile 1"),
        "{}",
        &s[..200.min(s.len())]
    );
    assert!(s.contains("Exit codes") && s.contains("UDLRABCSXYZM") && s.contains("Examples"));
    let o = run(&["man", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("one of: run, profile"));
    let d = tmp("man");
    let o = run(&["man", "--dir", d.to_str().unwrap()]);
    ok(&o);
    let mut names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "retroprof-completions.1",
            "retroprof-diff.1",
            "retroprof-heap.1",
            "retroprof-man.1",
            "retroprof-profile.1",
            "retroprof-run.1",
            "retroprof-samples.1",
            "retroprof.1"
        ]
    );
}

/// Run `args` on a pseudo-terminal (util-linux `script`, part of every
/// Debian system: bsdutils is Essential): what a user at a terminal sees,
/// and the exit code.
fn on_terminal(args: &[&str], env: &[(&str, &str)], dir: &Path) -> Output {
    let cmd = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    Command::new("script")
        .args(["-q", "-e", "-c", &cmd])
        .arg(dir.join("typescript"))
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` (bsdutils) is needed for the terminal tests")
}

/// On a terminal, `--color auto` colours and NO_COLOR stops it, and
/// binary outputs on `-` are refused (exit code 2) instead of garbling the
/// screen.
#[test]
fn on_a_terminal_auto_colours_and_binary_is_refused() {
    let d = tmp("terminal");
    let o = on_terminal(&["profile", "-n", "3"], &[], &d);
    ok(&o);
    assert!(has_escape(&o.stdout), "{}", text(&o.stdout));
    let o = on_terminal(&["profile", "-n", "3"], &[("NO_COLOR", "1")], &d);
    ok(&o);
    assert!(!has_escape(&o.stdout), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("_Entry_Point"));
    let o = on_terminal(&["profile", "-n", "3", "--color", "never"], &[], &d);
    assert!(!has_escape(&o.stdout));
    for args in [
        &["profile", "-n", "3", "--pprof", "-"][..],
        &["profile", "-n", "3", "--sample-histogram", "-"][..],
        &["run", "-n", "3", "--screenshot", "1:-"][..],
    ] {
        let o = on_terminal(args, &[], &d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stdout));
        assert!(
            text(&o.stdout).contains("to a terminal; redirect standard output"),
            "{args:?}: {}",
            text(&o.stdout)
        );
    }
    // Text on `-` is fine on a terminal.
    let o = on_terminal(&["profile", "-n", "3", "--csv", "-"], &[], &d);
    ok(&o);
    assert!(text(&o.stdout).contains("frame,busy_cycles"));
}
