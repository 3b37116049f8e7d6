//! Whole-or-nothing file output.

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
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p);
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

pub(crate) fn write<F>(path: &Path, replace: bool, f: F) -> Result<(), Error>
where
    F: FnOnce(&mut dyn Write) -> Result<(), Error>,
{
    let exists = || Error::Exists {
        path: path.display().to_string(),
    };
    if !replace && fs::symlink_metadata(path).is_ok() {
        return Err(exists());
    }
    let file_name = path
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{} does not name a file", path.display())))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Hidden temporary name in the same folder (same file system, so the
    // rename is atomic).
    let (tmp, file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut name = std::ffi::OsString::from(".");
        name.push(file_name);
        name.push(format!(".{}-{}.tmp", std::process::id(), n));
        let tmp = dir.join(name);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(path, e)),
        }
    };
    let mut guard = TempGuard {
        path: Some(tmp.clone()),
    };
    let mut w = std::io::BufWriter::new(file);
    f(&mut w).map_err(|e| relabel(e, path))?;
    let file = w.into_inner().map_err(|e| {
        io(
            path,
            std::io::Error::new(e.error().kind(), e.error().to_string()),
        )
    })?;
    file.sync_all().map_err(|e| io(path, e))?;
    drop(file);
    if replace {
        fs::rename(&tmp, path).map_err(|e| io(path, e))?;
    } else {
        // A hard link fails if `path` appeared meanwhile: no clobbering even
        // under a race. File systems without hard links fall back to a
        // checked rename.
        match fs::hard_link(&tmp, path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(exists()),
            Err(_) => {
                if fs::symlink_metadata(path).is_ok() {
                    return Err(exists());
                }
                fs::rename(&tmp, path).map_err(|e| io(path, e))?;
                guard.path = None;
                return Ok(());
            }
        }
    }
    // Renamed: nothing to remove. Hard-linked: remove the temporary name.
    if replace {
        guard.path = None;
    }
    Ok(())
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
