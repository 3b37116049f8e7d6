//! Streaming log reader: plain or gzip (detected by its magic bytes), from a
//! file or standard input (`-`), one line at a time.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use crate::Error;

/// Reads a log line by line, counting lines (1-based).
pub struct LogReader {
    inner: Box<dyn BufRead>,
    name: String,
    line_no: u64,
    buf: Vec<u8>,
    gzip: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl LogReader {
    /// Opens `path`, or standard input when `path` is `-`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let name = path.display().to_string();
        if path.as_os_str() == "-" {
            return Self::from_reader(Box::new(io::stdin().lock()), "<stdin>");
        }
        let file = File::open(path).map_err(|source| Error::Io {
            path: name.clone(),
            source,
        })?;
        Self::from_reader(Box::new(file), &name)
    }

    /// Wraps any reader; gzip is detected from the first two bytes.
    pub fn from_reader(r: Box<dyn Read>, name: &str) -> Result<Self, Error> {
        let mut buffered = BufReader::with_capacity(1 << 16, r);
        let head = buffered.fill_buf().map_err(|source| Error::Io {
            path: name.to_string(),
            source,
        })?;
        let gzip = head.len() >= 2 && head[..2] == GZIP_MAGIC;
        let inner: Box<dyn BufRead> = if gzip {
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::bufread::MultiGzDecoder::new(buffered),
            ))
        } else {
            Box::new(buffered)
        };
        Ok(LogReader {
            inner,
            name: name.to_string(),
            line_no: 0,
            buf: Vec::with_capacity(256),
            gzip,
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
        self.buf.clear();
        let n = self
            .inner
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| Error::Read {
                path: self.name.clone(),
                line: self.line_no + 1,
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        let mut end = self.buf.len();
        if end > 0 && self.buf[end - 1] == b'\n' {
            end -= 1;
        }
        if end > 0 && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        Ok(Some((self.line_no, &self.buf[..end])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_plain_and_gzip_alike() {
        let text = b"Frame 1\r\nalloc 4 0x10 0x20\n\nfree 0x10 0x30";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        for (data, is_gz) in [(text.to_vec(), false), (gz, true)] {
            let mut r = LogReader::from_reader(Box::new(io::Cursor::new(data)), "t").unwrap();
            assert_eq!(r.is_gzip(), is_gz);
            let mut lines = Vec::new();
            while let Some((_, l)) = r.next_line().unwrap() {
                lines.push(String::from_utf8(l.to_vec()).unwrap());
            }
            assert_eq!(
                lines,
                ["Frame 1", "alloc 4 0x10 0x20", "", "free 0x10 0x30"]
            );
            assert_eq!(r.line_no(), 4);
        }
    }

    #[test]
    fn truncated_gzip_is_an_error_with_the_line() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for i in 0..2000 {
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
        assert!(msg.contains("line"), "{msg}");
    }
}
