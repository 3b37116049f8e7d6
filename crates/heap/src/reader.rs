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

type Chunk = io::Result<Vec<u8>>;

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
                        if tx.send(Ok(buf)).is_err() {
                            return;
                        }
                    }
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if eof {
            if !buf.is_empty() && tx.send(Ok(buf)).is_err() {
                return;
            }
            return;
        }
        match buf.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                carry = buf[nl + 1..].to_vec();
                buf.truncate(nl + 1);
                if tx.send(Ok(buf)).is_err() {
                    return;
                }
            }
            None => carry = buf, // one long line: keep reading
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
    /// ending), or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, Error> {
        while self.pos >= self.chunk.len() {
            if self.done {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Ok(c)) => {
                    self.chunk = c;
                    self.pos = 0;
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
                "x".repeat(CHUNK * 2 + 5)
            } else {
                format!("line {i}")
            };
            text.extend_from_slice(l.as_bytes());
            text.push(b'\n');
            want.push(l);
        }
        assert_eq!(lines_of(text).0, want);
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
