//! Output safety (issue 21): the atomic writer never replaces a device node,
//! a FIFO or a symbolic link; the output plan refuses outputs that are
//! inputs, duplicate outputs and outputs that cannot be written; temporaries
//! are removed on SIGTERM and stale ones by the next write.
//!
//! Every node is made by the test in its own temporary folder (mkfifo,
//! mknod when running as root); the system's /dev is never touched.
#![cfg(unix)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use retroprof_profile::write::{self, OutputPlan};
use retroprof_profile::Error;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("retroprof-safety-{}-{}", name, std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn text(s: &'static str) -> impl FnOnce(&mut dyn Write) -> Result<(), Error> {
    move |w| {
        w.write_all(s.as_bytes()).unwrap();
        Ok(())
    }
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().expect("mkfifo");
    assert!(st.success());
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[test]
fn a_fifo_is_written_in_place_not_replaced() {
    let d = tmpdir("fifo");
    let fifo = d.join("pipe");
    mkfifo(&fifo);
    let f2 = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        fs::File::open(&f2).unwrap().read_to_string(&mut s).unwrap();
        s
    });
    write::atomic(&fifo, true, text("through the pipe")).unwrap();
    assert_eq!(reader.join().unwrap(), "through the pipe");
    let t = fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(t.is_fifo(), "the FIFO was replaced: {t:?}");
    assert_eq!(entries(&d), ["pipe"]);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_character_device_is_written_in_place_not_replaced() {
    if !is_root() {
        eprintln!("not root: mknod needs root; the FIFO test covers the in-place path");
        return;
    }
    let d = tmpdir("chardev");
    let null = d.join("null");
    // Major 1, minor 3: the null device, made in our own folder.
    let st = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    assert!(st.success());
    write::atomic(&null, true, text("discarded")).unwrap();
    let t = fs::symlink_metadata(&null).unwrap().file_type();
    assert!(t.is_char_device(), "the device node was replaced: {t:?}");
    assert_eq!(entries(&d), ["null"]);
    // The plan accepts a null device twice (nothing is lost there).
    let mut plan = OutputPlan::new();
    plan.output("--csv", &null).output("--json", &null);
    plan.check().unwrap();
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_symlink_target_is_replaced_atomically_and_the_link_kept() {
    let d = tmpdir("symlink");
    fs::create_dir(d.join("real")).unwrap();
    let target = d.join("real/out.json");
    fs::write(&target, "old").unwrap();
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    write::atomic(&link, true, text("new")).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&target).unwrap(), "new");
    assert_eq!(entries(&d.join("real")), ["out.json"]);
    assert_eq!(entries(&d), ["link.json", "real"]);

    // A dangling link is refused and left alone.
    let dangling = d.join("dangling.json");
    std::os::unix::fs::symlink(d.join("nowhere/x"), &dangling).unwrap();
    let e = write::atomic(&dangling, true, text("x")).unwrap_err();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_directory_is_refused() {
    let d = tmpdir("dir");
    let e = write::atomic(&d, true, text("x")).unwrap_err();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    assert!(e.to_string().contains("directory"), "{e}");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn plan_refuses_an_output_that_is_an_input() {
    let d = tmpdir("plan-input");
    let rom = d.join("game.bin");
    fs::write(&rom, "rom").unwrap();
    let check = |out: &Path| {
        let mut plan = OutputPlan::new();
        plan.input("the ROM", &rom).output("--json", out);
        plan.check()
    };
    // The same path, another spelling, a hard link, a symbolic link.
    let hard = d.join("hard.bin");
    fs::hard_link(&rom, &hard).unwrap();
    let soft = d.join("soft.bin");
    std::os::unix::fs::symlink(&rom, &soft).unwrap();
    let spelled = d.join(".").join("game.bin");
    for out in [&rom, &spelled, &hard, &soft] {
        let e = check(out).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        let m = e.to_string();
        assert!(m.contains("--json") && m.contains("the ROM"), "{m}");
    }
    check(&d.join("report.json")).unwrap();
    assert_eq!(fs::read_to_string(&rom).unwrap(), "rom");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn plan_refuses_two_outputs_on_one_path() {
    let d = tmpdir("plan-dup");
    let mut plan = OutputPlan::new();
    plan.output("--csv", &d.join("a.txt"))
        .output("--json", &d.join("./a.txt"));
    let e = plan.check().unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("--csv") && m.contains("--json") && m.contains("same file"),
        "{m}"
    );
    let mut plan = OutputPlan::new();
    plan.output("--csv", &d.join("a.txt"))
        .output("--json", &d.join("b.txt"));
    plan.check().unwrap();
    assert!(
        entries(&d).is_empty(),
        "the probe left files: {:?}",
        entries(&d)
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn plan_refuses_missing_or_unusable_folders() {
    let d = tmpdir("plan-dir");
    let mut plan = OutputPlan::new();
    plan.output("--json", &d.join("no/such/folder/r.json"));
    let m = plan.check().unwrap_err().to_string();
    assert!(m.contains("does not exist") && m.contains("--json"), "{m}");
    fs::write(d.join("file"), "x").unwrap();
    let mut plan = OutputPlan::new();
    plan.output("--csv", &d.join("file/r.csv"));
    let m = plan.check().unwrap_err().to_string();
    assert!(m.contains("not a folder"), "{m}");
    if !is_root() {
        let ro = d.join("ro");
        fs::create_dir(&ro).unwrap();
        let mut perm = fs::metadata(&ro).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
        fs::set_permissions(&ro, perm).unwrap();
        let mut plan = OutputPlan::new();
        plan.output("--csv", &ro.join("r.csv"));
        let m = plan.check().unwrap_err().to_string();
        assert!(m.contains("cannot create"), "{m}");
        let mut perm = fs::metadata(&ro).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        fs::set_permissions(&ro, perm).unwrap();
    }
    // A FIFO output is fine (written in place; not opened by the check).
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let mut plan = OutputPlan::new();
    plan.output("--csv", &fifo);
    plan.check().unwrap();
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn stale_temporaries_of_dead_processes_are_removed() {
    let d = tmpdir("stale");
    let out = d.join("r.json");
    // PID 999999999 is beyond any pid_max: that process cannot be running.
    fs::write(d.join(".r.json.999999999-0.tmp"), "stale").unwrap();
    // Ours (this PID) and a live process's (PID 1) are left, as are other names.
    let mine = format!(".r.json.{}-77.tmp", std::process::id());
    fs::write(d.join(&mine), "mine").unwrap();
    fs::write(d.join(".r.json.1-0.tmp"), "init's").unwrap();
    fs::write(d.join(".other.json.999999999-0.tmp"), "other").unwrap();
    fs::write(d.join(".r.json.x-0.tmp"), "not ours").unwrap();
    write::atomic(&out, true, text("{}")).unwrap();
    assert_eq!(
        entries(&d),
        [
            ".other.json.999999999-0.tmp",
            ".r.json.1-0.tmp",
            &mine,
            ".r.json.x-0.tmp",
            "r.json"
        ]
    );
    fs::remove_dir_all(&d).unwrap();
}

const CHILD_ENV: &str = "RETROPROF_SAFETY_SIGNAL_CHILD";

/// Run in a child process: start writing `$CHILD_ENV` and never finish.
#[test]
fn signal_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    // A shell without job control starts background commands with SIGINT
    // (and, under nohup, SIGHUP) ignored, and the cleanup rightly keeps an
    // inherited "ignore". The child stands for a program started in the
    // foreground, so it takes the default dispositions first.
    #[allow(unsafe_code)]
    // SAFETY: signal(2) with SIG_DFL in a single-threaded child, before any
    // handler is installed.
    unsafe {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    write::install_signal_cleanup();
    let _ = write::atomic(Path::new(&path), true, |w| {
        w.write_all(&[b'x'; 4096]).unwrap();
        w.flush().unwrap();
        // Bounded: a signal that never comes fails the parent's checks
        // instead of hanging the test run.
        for _ in 0..1200 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(())
    });
}

#[test]
fn sigterm_and_sigint_remove_the_temporary() {
    for sig in ["TERM", "INT"] {
        let d = tmpdir(&format!("signal-{sig}"));
        let out = d.join("big.json");
        fs::write(&out, "previous").unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "signal_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while entries(&d).len() < 2 {
            assert!(start.elapsed().as_secs() < 30, "no temporary appeared");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let st = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert_eq!(entries(&d), ["big.json"], "SIG{sig} left a temporary");
        assert_eq!(fs::read_to_string(&out).unwrap(), "previous");
        fs::remove_dir_all(&d).unwrap();
    }
}
