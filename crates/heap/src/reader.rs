//! Streaming log reader: plain or gzip (detected by its magic bytes), from a
//! file or standard input (`-`), one line at a time.
//!
//! A background thread reads (and inflates) the input in chunks of whole
//! lines while the caller parses and replays the previous chunk; at most a
//! few chunks are in flight, so memory stays bounded.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use crate::Error;

/// Bytes per chunk handed from the reading thread.
const CHUNK: usize = 1 << 18;
/// Chunks in flight between the threads.
const IN_FLIGHT: usize = 4;

/// Longest line parsed (issue 21: a 1 GB line took 5 GB of memory and was
/// echoed into the report); a longer one is a malformed line, of which only
/// a short prefix is kept.
pub const MAX_LINE: usize = 64 << 10;
/// Longest line skipped: beyond this the input is not a text log (an endless
/// stream of NUL bytes, say) and reading stops with an error.
pub const MAX_SKIPPED_LINE: u64 = 64 << 20;
/// Bytes of an over-long line quoted in messages.
const PREFIX: usize = 40;

enum Msg {
    /// Whole lines (the last may lack its newline at the end of input).
    Lines(Vec<u8>),
    /// A line longer than [`MAX_LINE`], skipped: its first bytes and length.
    Long { prefix: Vec<u8>, len: u64 },
}

type Chunk = io::Result<Msg>;

/// `'prefix…'` of an over-long line, with non-printable bytes escaped.
pub(crate) fn quote_prefix(b: &[u8]) -> String {
    let t: String = String::from_utf8_lossy(&b[..b.len().min(PREFIX)])
        .chars()
        .take(PREFIX)
        .collect();
    format!("'{}…'", t.escape_debug())
}

fn too_long(len: u64, prefix: &[u8]) -> String {
    format!(
        "line of {len} bytes is longer than the {MAX_LINE}-byte limit (starts {})",
        quote_prefix(prefix)
    )
}

/// Reads a log line by line, counting lines (1-based).
pub struct LogReader {
    rx: Receiver<Chunk>,
    thread: Option<JoinHandle<()>>,
    name: String,
    line_no: u64,
    chunk: Vec<u8>,
    pos: usize,
    gzip: bool,
    done: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads whole lines into chunks: a chunk ends after its last `\n` (the
/// rest starts the next chunk); a line longer than a chunk grows it.
fn pump(mut r: Box<dyn BufRead + Send>, tx: std::sync::mpsc::SyncSender<Chunk>) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = std::mem::take(&mut carry);
        // Fill up to CHUNK bytes (more when a long line is carried over).
        let target = if buf.len() >= CHUNK / 2 {
            buf.len() * 2
        } else {
            CHUNK
        };
        let mut eof = false;
        while buf.len() < target {
            let start = buf.len();
            buf.resize(target, 0);
            match r.read(&mut buf[start..]) {
                Ok(0) => {
                    buf.truncate(start);
                    eof = true;
                    break;
                }
                Ok(n) => buf.truncate(start + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(start),
                Err(e) => {
                    buf.truncate(start);
                    // Hand over the complete lines read so far, then the error.
                    if let Some(nl) = buf.iter().rposition(|&b| b == b'\n') {
                        buf.truncate(nl + 1);
                        if tx.send(Ok(Msg::Lines(buf))).is_err() {
                            return;
                        }
                    }
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if eof {
            if !buf.is_empty() && tx.send(Ok(Msg::Lines(buf))).is_err() {
                return;
            }
            return;
        }
        match buf.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                carry = buf[nl + 1..].to_vec();
                buf.truncate(nl + 1);
                if tx.send(Ok(Msg::Lines(buf))).is_err() {
                    return;
                }
            }
            None if buf.len() > MAX_LINE => {
                // One over-long line: keep its start, skip to its end.
                let prefix = buf[..PREFIX.min(buf.len())].to_vec();
                let mut len = buf.len() as u64;
                buf.clear();
                buf.resize(1 << 16, 0);
                loop {
                    match r.read(&mut buf) {
                        Ok(0) => {
                            let _ = tx.send(Ok(Msg::Long { prefix, len }));
                            return;
                        }
                        Ok(n) => {
                            if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
                                len += i as u64;
                                carry = buf[i + 1..n].to_vec();
                                if tx.send(Ok(Msg::Long { prefix, len })).is_err() {
                                    return;
                                }
                                break;
                            }
                            len += n as u64;
                            if len > MAX_SKIPPED_LINE {
                                let _ = tx.send(Err(io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    format!(
                                        "the next line is longer than {MAX_SKIPPED_LINE} bytes \
                                         (starts {}): not a text allocation log",
                                        quote_prefix(&prefix)
                                    ),
                                )));
                                return;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    }
                }
            }
            None => carry = buf, // a long line: keep reading
        }
    }
}

impl LogReader {
    /// Opens `path`, or standard input when `path` is `-`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let name = path.display().to_string();
        if path.as_os_str() == "-" {
            return Self::from_reader(Box::new(io::stdin()), "<stdin>");
        }
        let file = File::open(path).map_err(|source| Error::Io {
            path: name.clone(),
            source,
        })?;
        Self::from_reader(Box::new(file), &name)
    }

    /// Wraps any reader; gzip is detected from the first two bytes.
    pub fn from_reader(r: Box<dyn Read + Send>, name: &str) -> Result<Self, Error> {
        let mut buffered = BufReader::with_capacity(1 << 16, r);
        let head = buffered.fill_buf().map_err(|source| Error::Io {
            path: name.to_string(),
            source,
        })?;
        let gzip = head.len() >= 2 && head[..2] == GZIP_MAGIC;
        let inner: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::bufread::MultiGzDecoder::new(buffered),
            ))
        } else {
            Box::new(buffered)
        };
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let thread = std::thread::Builder::new()
            .name("heap-log-reader".into())
            .spawn(move || pump(inner, tx))
            .map_err(|source| Error::Io {
                path: name.to_string(),
                source,
            })?;
        Ok(LogReader {
            rx,
            thread: Some(thread),
            name: name.to_string(),
            line_no: 0,
            chunk: Vec::new(),
            pos: 0,
            gzip,
            done: false,
        })
    }

    /// The name used in messages (`<stdin>` for `-`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// The number of the line last returned (1-based).
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// The next line (its 1-based number, and its text without the line
    /// ending), or `None` at the end. A line longer than [`MAX_LINE`] is an
    /// [`Error::Malformed`] naming it, after which reading may go on with
    /// the next line; a line longer than [`MAX_SKIPPED_LINE`] ends reading
    /// with an [`Error::Read`].
    pub fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, Error> {
        while self.pos >= self.chunk.len() {
            if self.done {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Ok(Msg::Lines(c))) => {
                    self.chunk = c;
                    self.pos = 0;
                }
                Ok(Ok(Msg::Long { prefix, len })) => {
                    self.line_no += 1;
                    return Err(Error::Malformed {
                        path: self.name.clone(),
                        line: self.line_no,
                        message: too_long(len, &prefix),
                    });
                }
                Ok(Err(source)) => {
                    self.done = true;
                    return Err(Error::Read {
                        path: self.name.clone(),
                        line: self.line_no,
                        source,
                    });
                }
                Err(_) => {
                    self.done = true;
                    if let Some(t) = self.thread.take() {
                        let _ = t.join();
                    }
                    return Ok(None);
                }
            }
        }
        let rest = &self.chunk[self.pos..];
        let (line, used) = match memchr_nl(rest) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += used;
        self.line_no += 1;
        if line.len() > MAX_LINE {
            return Err(Error::Malformed {
                path: self.name.clone(),
                line: self.line_no,
                message: too_long(line.len() as u64, line),
            });
        }
        let mut end = line.len();
        if end > 0 && line[end - 1] == b'\r' {
            end -= 1;
        }
        Ok(Some((self.line_no, &line[..end])))
    }
}

#[inline]
fn memchr_nl(s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == b'\n')
}

impl Drop for LogReader {
    fn drop(&mut self) {
        // Dropping the receiver makes the thread's next send fail, so it
        // ends; do not wait for it (it may be blocked reading stdin).
        self.thread.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(data: Vec<u8>) -> (Vec<String>, bool) {
        let mut r = LogReader::from_reader(Box::new(io::Cursor::new(data)), "t").unwrap();
        let gz = r.is_gzip();
        let mut lines = Vec::new();
        while let Some((n, l)) = r.next_line().unwrap() {
            assert_eq!(n as usize, lines.len() + 1);
            lines.push(String::from_utf8(l.to_vec()).unwrap());
        }
        (lines, gz)
    }

    #[test]
    fn reads_plain_and_gzip_alike() {
        let text = b"Frame 1\r\nalloc 4 0x10 0x20\n\nfree 0x10 0x30";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        for (data, is_gz) in [(text.to_vec(), false), (gz, true)] {
            let (lines, g) = lines_of(data);
            assert_eq!(g, is_gz);
            assert_eq!(
                lines,
                ["Frame 1", "alloc 4 0x10 0x20", "", "free 0x10 0x30"]
            );
        }
        assert_eq!(lines_of(Vec::new()).0.len(), 0);
    }

    #[test]
    fn lines_across_chunks_and_longer_than_a_chunk() {
        let mut text = Vec::new();
        let mut want = Vec::new();
        for i in 0..40_000 {
            let l = if i == 777 {
                "x".repeat(MAX_LINE)
            } else {
                format!("line {i}")
            };
            text.extend_from_slice(l.as_bytes());
            text.push(b'\n');
            want.push(l);
        }
        assert_eq!(lines_of(text).0, want);
    }

    /// Issue 21: `heap /dev/zero` aborted allocating 8 GB; a 1 GB line took
    /// 5 GB. Over-long lines are malformed lines naming their number (with a
    /// short prefix), reading goes on after them, and an endless line stops
    /// with an error (NUL bytes made here, plain and gzip).
    #[test]
    fn over_long_lines_are_bounded() {
        for long in [MAX_LINE + 1, CHUNK + 7, 3 * CHUNK] {
            let mut text = b"alloc 4 0x10 0x20\n".to_vec();
            text.extend(std::iter::repeat_n(0u8, long));
            text.extend_from_slice(b"\nfree 0x10 0x30\n");
            let mut r = LogReader::from_reader(Box::new(io::Cursor::new(text)), "nul").unwrap();
            assert_eq!(r.next_line().unwrap().unwrap().0, 1);
            let e = r.next_line().unwrap_err();
            let m = e.to_string();
            assert!(m.starts_with("nul:2: line of"), "{m}");
            assert!(m.contains(&long.to_string()), "{m}");
            assert!(m.len() < 300, "{m}");
            let (n, l) = r.next_line().unwrap().unwrap();
            assert_eq!((n, l), (3, &b"free 0x10 0x30"[..]));
            assert!(r.next_line().unwrap().is_none());
        }
        // Endless (well, longer than the skip limit) NULs, as from /dev/zero.
        struct Zeros(u64);
        impl Read for Zeros {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Ok(0);
                }
                let n = (b.len() as u64).min(self.0) as usize;
                b[..n].fill(0);
                self.0 -= n as u64;
                Ok(n)
            }
        }
        let mut r =
            LogReader::from_reader(Box::new(Zeros(MAX_SKIPPED_LINE + (1 << 20))), "zero").unwrap();
        let e = r.next_line().unwrap_err();
        assert!(matches!(e, Error::Read { .. }), "{e}");
        assert!(e.to_string().contains("not a text allocation log"), "{e}");
        // The gzip path takes the same road.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&vec![0u8; 4 * CHUNK]).unwrap();
        gz.write_all(b"\nframe 1\n").unwrap();
        let gz = gz.finish().unwrap();
        let mut r = LogReader::from_reader(Box::new(io::Cursor::new(gz)), "z.gz").unwrap();
        assert!(r.next_line().unwrap_err().to_string().contains("z.gz:1"));
        assert_eq!(r.next_line().unwrap().unwrap().1, b"frame 1");
    }

    #[test]
    fn truncated_gzip_is_an_error_with_the_line() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for i in 0..200_000 {
            writeln!(gz, "alloc 4 0x{:x} 0x20", i * 16).unwrap();
        }
        let mut gz = gz.finish().unwrap();
        gz.truncate(gz.len() / 2);
        let mut r = LogReader::from_reader(Box::new(io::Cursor::new(gz)), "cut.gz").unwrap();
        let err = loop {
            match r.next_line() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a truncated gzip stream must be an error"),
                Err(e) => break e,
            }
        };
        let msg = err.to_string();
        assert!(msg.contains("cut.gz"), "{msg}");
        assert!(msg.contains("after line"), "{msg}");
    }
}
