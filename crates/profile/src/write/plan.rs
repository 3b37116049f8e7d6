//! Checks made on every output before a run starts, so that nothing a user
//! gave is overwritten and no run is wasted on an output that cannot be
//! written.
//!
//! [`OutputPlan`] collects a command's inputs and outputs; [`OutputPlan::check`]
//! refuses ([`Error::Refused`]):
//! - an output that is an input (same device and inode, or the same
//!   canonical path; symbolic links and hard links are seen through);
//! - two outputs on one path (character devices such as a null device
//!   excepted: nothing is lost there);
//! - an output that is a directory, a block device, a socket, or a
//!   symbolic link whose target cannot be reached;
//! - an output whose folder does not exist or cannot be written (probed by
//!   creating and removing a temporary file of the writer's naming).

use std::fs;
use std::path::{Path, PathBuf};

use super::atomic::{classify, is_stream_name, Target};
use crate::Error;

/// One file's identity.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    /// Device and inode of an existing file (Unix).
    node: Option<(u64, u64)>,
    /// Canonical path: of the file if it exists, else of its folder joined
    /// with its name.
    canonical: Option<PathBuf>,
    /// A character device (terminal, null device).
    char_device: bool,
}

impl Identity {
    fn of(path: &Path) -> Identity {
        let meta = fs::metadata(path).ok();
        #[cfg(unix)]
        let node = meta.as_ref().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        });
        #[cfg(not(unix))]
        let node = None;
        #[cfg(unix)]
        let char_device = meta.as_ref().is_some_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_char_device()
        });
        #[cfg(not(unix))]
        let char_device = false;
        let canonical = fs::canonicalize(path).ok().or_else(|| {
            let name = path.file_name()?;
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(fs::canonicalize(dir).ok()?.join(name))
        });
        Identity {
            node,
            canonical,
            char_device,
        }
    }

    fn same(&self, other: &Identity) -> bool {
        match (self.node, other.node) {
            (Some(a), Some(b)) => a == b,
            _ => self.canonical.is_some() && self.canonical == other.canonical,
        }
    }
}

struct Entry {
    what: String,
    path: PathBuf,
    id: Identity,
}

/// A command's inputs and outputs, checked together before the run.
#[derive(Default)]
pub struct OutputPlan {
    inputs: Vec<Entry>,
    outputs: Vec<Entry>,
}

impl OutputPlan {
    pub fn new() -> Self {
        Self::default()
    }

    /// A file the command reads (`what`: how messages call it, e.g. "the ROM").
    /// Standard input (`-`) and paths that do not exist are ignored.
    pub fn input(&mut self, what: &str, path: &Path) -> &mut Self {
        if path.as_os_str() != "-" && fs::metadata(path).is_ok() {
            self.inputs.push(Entry {
                what: what.to_string(),
                path: path.to_path_buf(),
                id: Identity::of(path),
            });
        }
        self
    }

    /// A file the command writes (`what`: the option, e.g. "--json").
    pub fn output(&mut self, what: &str, path: &Path) -> &mut Self {
        self.outputs.push(Entry {
            what: what.to_string(),
            path: path.to_path_buf(),
            id: Identity::of(path),
        });
        self
    }

    /// Refuse what would lose data or cannot be written (see the module
    /// documentation). Nothing is written except a probe file that is
    /// removed at once.
    pub fn check(&self) -> Result<(), Error> {
        let refuse = |m: String| Err(Error::Refused(m));
        for (i, o) in self.outputs.iter().enumerate() {
            if o.path.as_os_str().is_empty() {
                return refuse(format!("{}: empty file name", o.what));
            }
            for inp in &self.inputs {
                if !(o.id.char_device && inp.id.char_device) && o.id.same(&inp.id) {
                    return refuse(format!(
                        "{} {} is {} ({}): refusing to overwrite an input",
                        o.what,
                        o.path.display(),
                        inp.what,
                        inp.path.display()
                    ));
                }
            }
            for earlier in &self.outputs[..i] {
                if !o.id.char_device && o.id.same(&earlier.id) {
                    return refuse(format!(
                        "{} {} and {} {} are the same file: give each output its own path",
                        earlier.what,
                        earlier.path.display(),
                        o.what,
                        o.path.display()
                    ));
                }
            }
            let target = classify(&o.path).map_err(|e| match e {
                Error::Refused(m) => Error::Refused(format!("{}: {m}", o.what)),
                e => e,
            })?;
            if let Target::File(t) = target {
                check_folder(&o.what, &o.path, &t)?;
            } else if !is_stream_name(&o.path) {
                // A device or FIFO: it must open for writing. A FIFO is not
                // opened here (that would block until a reader comes).
            }
        }
        Ok(())
    }
}

/// The folder of `target` (the output `shown`, or its link target) exists
/// and takes a new file.
fn check_folder(what: &str, shown: &Path, target: &Path) -> Result<(), Error> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let refuse = |why: String| Err(Error::Refused(format!("{what} {}: {why}", shown.display())));
    match fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return refuse(format!("{} is not a folder", dir.display())),
        Err(e) => return refuse(format!("folder {} does not exist ({e})", dir.display())),
    }
    let probe = dir.join(format!(
        ".retroprof-probe.{}-{}.tmp",
        std::process::id(),
        PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(f) => {
            drop(f);
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => refuse(format!("cannot create a file in {} ({e})", dir.display())),
    }
}

static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
