//! Bounded reading of the files users give (symbol listings, ELF files,
//! linker maps, histograms): an endless stream or a huge file is refused
//! with a clear error instead of being read into memory.

use std::io::Read;
use std::path::Path;

/// Largest symbol file or linker map (nm listing, map, ELF with DWARF)
/// read: 512 MiB.
pub const MAX_SYMBOL_FILE_BYTES: u64 = 512 << 20;
/// Largest histogram read: 64 MiB (a Petit dump is 128 KiB; a text one
/// of 64 MiB has millions of lines).
pub const MAX_HISTOGRAM_BYTES: u64 = 64 << 20;

/// Read `path` whole if it holds at most `limit` bytes. A regular file is
/// checked before reading; anything else (a FIFO, a device, a standard
/// stream) is read up to `limit` + 1 bytes. Larger inputs give an
/// [`std::io::ErrorKind::InvalidData`] error saying so (the caller names
/// the file).
pub fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let too_big = |what: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{what}; the limit is {limit} bytes"),
        )
    };
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_big(format!("the file is {} bytes", meta.len())));
    }
    let f = std::fs::File::open(path)?;
    let mut data = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    f.take(limit + 1).read_to_end(&mut data)?;
    if data.len() as u64 > limit {
        return Err(too_big("more than that was read".to_string()));
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_files_and_streams() {
        let d = std::env::temp_dir().join(format!("retroprof-readlim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("f");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read_limited(&p, 5).unwrap(), b"12345");
        let e = read_limited(&p, 4).unwrap_err();
        assert!(e.to_string().contains("5 bytes"), "{e}");
        assert!(read_limited(&d, 4).is_err());
        #[cfg(unix)]
        {
            // An endless writer into a FIFO made here: reading stops at the limit.
            let fifo = d.join("fifo");
            assert!(std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success());
            let f2 = fifo.clone();
            let w = std::thread::spawn(move || {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().write(true).open(&f2).unwrap();
                let block = [0u8; 4096];
                while f.write_all(&block).is_ok() {}
            });
            let e = read_limited(&fifo, 1 << 16).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
            w.join().unwrap();
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
