//! Checks made on every output before a run starts, so that nothing a user
//! gave is overwritten and no run is wasted on an output that cannot be
//! written.
//!
//! [`OutputPlan`] collects a command's inputs and outputs; [`OutputPlan::check`]
//! refuses ([`Error::Refused`]):
//! - an output that is an input (same device and inode, or the same
//!   canonical path; symbolic links and hard links are seen through);
//!   `-` is standard output as an output and standard input as an input,
//!   and is compared by what the process's stream is (a shell's
//!   `>> input.log` is refused);
//! - two outputs on one path (character devices such as a null device
//!   excepted: nothing is lost there), and two outputs on standard output
//!   (`-`, `/dev/stdout`, ...), whatever it is;
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
    /// The identity of standard input (`input`) or output for `-`.
    fn of_std(input: bool) -> Identity {
        #[cfg(unix)]
        let meta = {
            use std::os::fd::AsFd;
            let fd = if input {
                std::io::stdin().as_fd().try_clone_to_owned()
            } else {
                std::io::stdout().as_fd().try_clone_to_owned()
            };
            fd.ok().and_then(|fd| fs::File::from(fd).metadata().ok())
        };
        #[cfg(not(unix))]
        let meta: Option<fs::Metadata> = {
            let _ = input;
            None
        };
        Self::from_meta(meta, None)
    }

    fn of(path: &Path) -> Identity {
        let meta = fs::metadata(path).ok();
        let canonical = fs::canonicalize(path).ok().or_else(|| {
            let name = path.file_name()?;
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(fs::canonicalize(dir).ok()?.join(name))
        });
        Self::from_meta(meta, canonical)
    }

    fn from_meta(meta: Option<fs::Metadata>, canonical: Option<PathBuf>) -> Identity {
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
    /// `-` is standard input (whatever the shell connected it to); paths
    /// that do not exist are ignored.
    pub fn input(&mut self, what: &str, path: &Path) -> &mut Self {
        if path.as_os_str() == "-" {
            self.inputs.push(Entry {
                what: what.to_string(),
                path: path.to_path_buf(),
                id: Identity::of_std(true),
            });
        } else if fs::metadata(path).is_ok() {
            self.inputs.push(Entry {
                what: what.to_string(),
                path: path.to_path_buf(),
                id: Identity::of(path),
            });
        }
        self
    }

    /// A file the command writes (`what`: the option, e.g. "--json"); `-`
    /// is standard output.
    pub fn output(&mut self, what: &str, path: &Path) -> &mut Self {
        let id = if path.as_os_str() == "-" {
            Identity::of_std(false)
        } else {
            Identity::of(path)
        };
        self.outputs.push(Entry {
            what: what.to_string(),
            path: path.to_path_buf(),
            id,
        });
        self
    }

    /// True when an output goes to standard output (`-`, `/dev/stdout`, ...:
    /// [`super::is_stdout`]): the command then prints its report elsewhere.
    pub fn writes_stdout(&self) -> bool {
        self.outputs.iter().any(|o| super::is_stdout(&o.path))
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
                if super::is_stdout(&o.path) && super::is_stdout(&earlier.path) {
                    return refuse(format!(
                        "{} {} and {} {} both go to standard output: only one output can be `-`",
                        earlier.what,
                        earlier.path.display(),
                        o.what,
                        o.path.display()
                    ));
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(plan: &OutputPlan) -> String {
        match plan.check() {
            Err(Error::Refused(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Two outputs on standard output are refused, whatever stdout is (a
    /// terminal, a pipe, a file), and `-` never names a file called `-`.
    #[test]
    fn only_one_output_on_standard_output() {
        let mut plan = OutputPlan::new();
        plan.output("--csv", Path::new("-"));
        assert!(plan.writes_stdout());
        plan.check().unwrap();
        plan.output("--json", Path::new("-"));
        let m = refusal(&plan);
        assert!(
            m.contains("--csv - and --json - both go to standard output"),
            "{m}"
        );
        let mut plan = OutputPlan::new();
        plan.output("--csv", Path::new("-"));
        plan.output("--json", Path::new("/dev/stdout"));
        assert!(refusal(&plan).contains("only one output can be `-`"));
        let mut plan = OutputPlan::new();
        plan.output("--csv", Path::new("frames.csv"));
        assert!(!plan.writes_stdout());
    }

    /// `-` as an input (standard input) and `-` as an output (standard
    /// output) are two streams: allowed together.
    #[test]
    fn stdin_and_stdout_dashes_together() {
        let mut plan = OutputPlan::new();
        plan.input("the log", Path::new("-"));
        plan.output("--json", Path::new("-"));
        // The test harness's stdin and stdout are not one regular file.
        plan.check().unwrap();
    }
}
