//! Whole-or-nothing file output, safe for whatever the path names.
//!
//! - A regular file (or a new name) is written to a hidden temporary file in
//!   the same folder (`.NAME.PID-N.tmp`), which is renamed over it.
//! - A character device (a terminal, a null device) or a FIFO is written
//!   directly: renaming over it would replace the node with a regular file.
//!   So are `-` (standard output, the command-line convention) and the
//!   standard-stream names `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and
//!   `/proc/self/fd/N`.
//! - A symbolic link is followed: its final target is written (atomically,
//!   beside the target); a link whose target cannot be resolved is refused.
//! - A directory, a block device or a socket is refused.
//!
//! Temporaries are removed on errors and panics, and on SIGINT/SIGTERM once
//! [`install_signal_cleanup`] has run. SIGKILL (or a power cut) can leave one
//! behind: the next write of the same output removes temporaries of this
//! naming whose process is no longer running.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::STREAM_PATH;
use crate::Error;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes the temporary file unless disarmed (covers errors and panics).
struct TempGuard {
    path: Option<PathBuf>,
    slot: Option<cleanup::Slot>,
}

impl TempGuard {
    /// The temporary no longer exists under its name (renamed or removed).
    fn disarm(&mut self) {
        self.path = None;
        if let Some(s) = self.slot.take() {
            cleanup::unregister(s);
        }
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p);
        }
        if let Some(s) = self.slot.take() {
            cleanup::unregister(s);
        }
    }
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

fn relabel(e: Error, path: &Path) -> Error {
    match e {
        Error::Io { path: p, source } if p == STREAM_PATH => io(path, source),
        e => e,
    }
}

/// What an output path names, as far as writing it is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A regular file or a new name: temporary file + rename, at this path
    /// (a symbolic link's final target).
    File(PathBuf),
    /// A character device, a FIFO or a standard stream: written in place.
    Stream,
}

/// True for the names of the process's own standard streams (`-` is
/// standard output).
pub(crate) fn is_stream_name(path: &Path) -> bool {
    let s = path.as_os_str().to_string_lossy();
    s == "-"
        || s == "/dev/stdout"
        || s == "/dev/stderr"
        || s.starts_with("/dev/fd/")
        || s.starts_with("/proc/self/fd/")
}

#[cfg(unix)]
fn is_stream_type(t: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_char_device() || t.is_fifo()
}

#[cfg(not(unix))]
fn is_stream_type(_: &fs::FileType) -> bool {
    false
}

fn kind_name(t: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Decide how `path` is written (see the module documentation).
pub(crate) fn classify(path: &Path) -> Result<Target, Error> {
    let refuse = |msg: String| Error::Refused(msg);
    if is_stream_name(path) {
        return Ok(Target::Stream);
    }
    let lm = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => return Ok(Target::File(path.to_path_buf())),
    };
    let m = if lm.file_type().is_symlink() {
        match fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                return Err(refuse(format!(
                    "{} is a symbolic link whose target cannot be reached ({e}); \
                     not replacing the link: name the target instead",
                    path.display()
                )))
            }
        }
    } else {
        lm.clone()
    };
    let t = m.file_type();
    if is_stream_type(&t) {
        return Ok(Target::Stream);
    }
    if !t.is_file() {
        return Err(refuse(format!(
            "{} is {}: refusing to write an output there",
            path.display(),
            kind_name(&t)
        )));
    }
    if lm.file_type().is_symlink() {
        let target = fs::canonicalize(path).map_err(|e| {
            refuse(format!(
                "{} is a symbolic link whose target cannot be resolved ({e}); \
                 not replacing the link: name the target instead",
                path.display()
            ))
        })?;
        return Ok(Target::File(target));
    }
    Ok(Target::File(path.to_path_buf()))
}

/// Write to a device, FIFO or standard stream in place.
fn write_stream<F>(path: &Path, f: F) -> Result<(), Error>
where
    F: FnOnce(&mut dyn Write) -> Result<(), Error>,
{
    // The process's own standard output / error: through the same handle
    // as everything else printed there (a new open file description of a
    // redirected file would write over the start of it).
    let name = path.as_os_str().to_string_lossy();
    if super::is_stdout(path) {
        let mut out = std::io::stdout().lock();
        f(&mut out).map_err(|e| relabel(e, path))?;
        return out.flush().map_err(|e| io(path, e));
    }
    if matches!(&*name, "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") {
        let mut err = std::io::stderr().lock();
        f(&mut err).map_err(|e| relabel(e, path))?;
        return err.flush().map_err(|e| io(path, e));
    }
    let file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io(path, e))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w).map_err(|e| relabel(e, path))?;
    w.flush().map_err(|e| io(path, e))?;
    Ok(())
}

pub(crate) fn write<F>(path: &Path, replace: bool, f: F) -> Result<(), Error>
where
    F: FnOnce(&mut dyn Write) -> Result<(), Error>,
{
    let exists = || Error::Exists {
        path: path.display().to_string(),
    };
    // `-` is standard output, never a file of that name.
    if path.as_os_str() == "-" {
        return write_stream(path, f);
    }
    if !replace && fs::symlink_metadata(path).is_ok() {
        return Err(exists());
    }
    let target = match classify(path)? {
        Target::Stream => return write_stream(path, f),
        Target::File(t) => t,
    };
    let shown = path;
    let path = target.as_path();
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{} does not name a file", shown.display())))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_stale(&dir, file_name);
    // Hidden temporary name in the same folder (same file system, so the
    // rename is atomic).
    let (tmp, file, slot) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(temp_name(file_name, std::process::id(), n));
        // Registered before it exists, so a signal never misses it.
        let slot = cleanup::register(&tmp);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => break (tmp, file, slot),
            Err(e) => {
                if let Some(s) = slot {
                    cleanup::unregister(s);
                }
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    continue;
                }
                return Err(io(shown, e));
            }
        }
    };
    let mut guard = TempGuard {
        path: Some(tmp.clone()),
        slot,
    };
    let mut w = std::io::BufWriter::new(file);
    f(&mut w).map_err(|e| relabel(e, shown))?;
    let file = w.into_inner().map_err(|e| {
        io(
            shown,
            std::io::Error::new(e.error().kind(), e.error().to_string()),
        )
    })?;
    file.sync_all().map_err(|e| io(shown, e))?;
    drop(file);
    if replace {
        fs::rename(&tmp, path).map_err(|e| io(shown, e))?;
        guard.disarm();
    } else {
        // A hard link fails if `path` appeared meanwhile: no clobbering even
        // under a race. File systems without hard links fall back to a
        // checked rename.
        match fs::hard_link(&tmp, path) {
            Ok(()) => {} // the guard removes the temporary name
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(exists()),
            Err(_) => {
                if fs::symlink_metadata(path).is_ok() {
                    return Err(exists());
                }
                fs::rename(&tmp, path).map_err(|e| io(shown, e))?;
                guard.disarm();
            }
        }
    }
    Ok(())
}

/// `.NAME.PID-N.tmp`.
fn temp_name(file_name: &std::ffi::OsStr, pid: u32, n: u64) -> std::ffi::OsString {
    let mut name = std::ffi::OsString::from(".");
    name.push(file_name);
    name.push(format!(".{pid}-{n}.tmp"));
    name
}

/// The PID in a temporary name of ours for `file_name`, if it is one.
fn temp_pid(entry: &str, file_name: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(file_name)?;
    let mid = rest.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (pid, n) = mid.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Remove temporaries for `file_name` in `dir` left by processes that no
/// longer run (SIGKILL, power cut). Best effort: errors are ignored.
fn remove_stale(dir: &Path, file_name: &std::ffi::OsStr) {
    let Some(file_name) = file_name.to_str() else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = temp_pid(name, file_name) else {
            continue;
        };
        if pid == me || cleanup::process_alive(pid) {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// The temporaries in flight, removed by the SIGINT/SIGTERM handler.
///
/// A fixed table of C strings, so the handler needs no lock and no
/// allocation (only `unlink`, which is async-signal-safe). The handler sets
/// `IN_HANDLER` before it reads the table; whoever takes a name out of the
/// table frees it only while that flag is clear (else leaks it: the process
/// is about to end), so the handler never reads freed memory.
pub(crate) mod cleanup {
    use std::path::Path;

    /// An index into the table.
    #[derive(Debug)]
    pub struct Slot(#[allow(dead_code)] usize);

    // The workspace denies unsafe code: the signal handler needs libc
    // (signal, unlink, raise, kill) and raw C strings, here only.
    #[cfg(unix)]
    #[allow(unsafe_code)]
    mod imp {
        use super::Slot;
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        use std::path::Path;
        use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering::SeqCst};

        const SLOTS: usize = 64;
        #[allow(clippy::declare_interior_mutable_const)]
        const EMPTY: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
        static TABLE: [AtomicPtr<libc::c_char>; SLOTS] = [EMPTY; SLOTS];
        static IN_HANDLER: AtomicBool = AtomicBool::new(false);

        pub fn register(path: &Path) -> Option<Slot> {
            let c = CString::new(path.as_os_str().as_bytes()).ok()?;
            let p = c.into_raw();
            for (i, s) in TABLE.iter().enumerate() {
                if s.compare_exchange(std::ptr::null_mut(), p, SeqCst, SeqCst)
                    .is_ok()
                {
                    return Some(Slot(i));
                }
            }
            // Table full (64 outputs written at once): not covered.
            drop(unsafe { CString::from_raw(p) });
            None
        }

        pub fn unregister(slot: Slot) {
            let p = TABLE[slot.0].swap(std::ptr::null_mut(), SeqCst);
            if !p.is_null() && !IN_HANDLER.load(SeqCst) {
                drop(unsafe { CString::from_raw(p) });
            }
        }

        extern "C" fn on_signal(sig: libc::c_int) {
            IN_HANDLER.store(true, SeqCst);
            for s in TABLE.iter() {
                let p = s.load(SeqCst);
                if !p.is_null() {
                    unsafe { libc::unlink(p) };
                }
            }
            // End as the signal would have ended us (exit status 128+sig).
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }

        pub fn install() {
            let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                unsafe {
                    // Keep an inherited "ignore" (e.g. nohup).
                    let old = libc::signal(sig, h);
                    if old == libc::SIG_IGN {
                        libc::signal(sig, libc::SIG_IGN);
                    }
                }
            }
        }

        pub fn process_alive(pid: u32) -> bool {
            let Ok(pid) = libc::pid_t::try_from(pid) else {
                return false;
            };
            if pid <= 0 {
                return true; // not a process id: leave the file alone
            }
            let r = unsafe { libc::kill(pid, 0) };
            r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
        }
    }

    #[cfg(not(unix))]
    mod imp {
        use super::Slot;
        use std::path::Path;
        pub fn register(_: &Path) -> Option<Slot> {
            None
        }
        pub fn unregister(_: Slot) {}
        pub fn install() {}
        pub fn process_alive(_: u32) -> bool {
            true
        }
    }

    pub fn register(path: &Path) -> Option<Slot> {
        imp::register(path)
    }
    pub fn unregister(slot: Slot) {
        imp::unregister(slot)
    }
    pub fn install() {
        imp::install()
    }
    pub fn process_alive(pid: u32) -> bool {
        imp::process_alive(pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("retroprof-atomic-{}-{}", name, std::process::id()));
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

    #[test]
    fn writes_whole_file_and_refuses_to_replace() {
        let d = tmpdir("basic");
        let p = d.join("out.txt");
        write(&p, false, |w| {
            w.write_all(b"hello").unwrap();
            Ok(())
        })
        .unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"hello");
        let err = write(&p, false, |w| {
            w.write_all(b"other").unwrap();
            Ok(())
        })
        .unwrap_err();
        assert!(matches!(err, Error::Exists { .. }), "{err}");
        assert_eq!(fs::read(&p).unwrap(), b"hello");
        write(&p, true, |w| {
            w.write_all(b"replaced").unwrap();
            Ok(())
        })
        .unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"replaced");
        assert_eq!(entries(&d), vec!["out.txt".to_string()]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn error_leaves_no_file_and_no_temp() {
        let d = tmpdir("err");
        let p = d.join("out.txt");
        let err = write(&p, false, |w| {
            w.write_all(b"partial").unwrap();
            Err(super::super::io_err(std::io::Error::other("disk full")))
        })
        .unwrap_err();
        match err {
            Error::Io { path, .. } => assert_eq!(path, p.display().to_string()),
            e => panic!("unexpected {e}"),
        }
        assert!(entries(&d).is_empty(), "{:?}", entries(&d));
        // An error while replacing keeps the old content.
        fs::write(&p, b"old").unwrap();
        let _ = write(&p, true, |_| Err(Error::Invalid("bad".into()))).unwrap_err();
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(&d), vec!["out.txt".to_string()]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn panic_in_writer_removes_temp() {
        let d = tmpdir("panic");
        let p = d.join("out.txt");
        let r = std::panic::catch_unwind(|| {
            let _ = write(&p, false, |w| {
                w.write_all(b"x").unwrap();
                panic!("boom");
            });
        });
        assert!(r.is_err());
        assert!(entries(&d).is_empty(), "{:?}", entries(&d));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn missing_folder_is_an_io_error_naming_the_path() {
        let p = std::env::temp_dir()
            .join("retroprof-no-such-dir-xyz")
            .join("a.txt");
        let err = write(&p, false, |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("a.txt"), "{err}");
    }
}
