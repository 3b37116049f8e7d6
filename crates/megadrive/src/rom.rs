//! Cartridge images: loading, validation and header parsing.
//!
//! Header layout (Sega's cartridge header at 0x100-0x1FF, as documented by
//! public references such as plutiedev "ROM header"): console name at 0x100
//! ("SEGA MEGA DRIVE" / "SEGA GENESIS"), domestic name 0x120 (48 bytes),
//! overseas name 0x150 (48), serial 0x180 (14), checksum 0x18E (u16), I/O
//! support 0x190, ROM range 0x1A0, RAM range 0x1A8, SRAM declaration 0x1B0
//! ("RA", type, 0x20, start u32, end u32), region 0x1F0.

use std::path::{Path, PathBuf};

/// Largest image the SSF2-style bank mapper can address: 64 banks of
/// 512 KB (6-bit bank registers at 0xA130F3..0xA130FF).
pub const MAX_ROM_BYTES: usize = 64 * 0x80000;
/// Images up to this size are mapped linearly (0x000000-0x3FFFFF); larger
/// ones use the bank mapper.
pub const LINEAR_ROM_BYTES: usize = 0x400000;

#[derive(Debug, thiserror::Error)]
pub enum RomError {
    #[error("{path}: cannot read the ROM: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: is a directory, expected a Mega Drive ROM image (.bin/.md)")]
    IsDirectory { path: PathBuf },
    #[error("{path}: the file is empty, expected a Mega Drive ROM image")]
    Empty { path: PathBuf },
    #[error("{path}: {len} bytes is too short for a Mega Drive ROM (the header ends at byte 512)")]
    Truncated { path: PathBuf, len: usize },
    #[error("{path}: odd size ({len} bytes); a Mega Drive ROM is made of 16-bit words")]
    OddSize { path: PathBuf, len: usize },
    #[error("{path}: not a regular file (a device, FIFO or socket); give a ROM image file")]
    NotAFile { path: PathBuf },
    #[error("{path}: {len} bytes is larger than the bank mapper can address ({max} bytes)")]
    TooLarge {
        path: PathBuf,
        len: usize,
        max: usize,
    },
    #[error("{path}: looks like an interleaved SMD dump (512-byte header, 16 KB blocks); convert it to a plain .bin first")]
    Interleaved { path: PathBuf },
    #[error("{path}: not a Mega Drive ROM: no \"SEGA\" in the console name at byte offset 0x100 (found {found:?})")]
    BadHeader { path: PathBuf, found: String },
}

/// Video standard / console region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// Japan, NTSC (domestic console).
    JapanNtsc,
    /// Americas, NTSC (overseas).
    UsaNtsc,
    /// Europe, PAL (overseas).
    EuropePal,
}

impl Region {
    pub fn is_pal(self) -> bool {
        matches!(self, Region::EuropePal)
    }
    pub fn is_overseas(self) -> bool {
        !matches!(self, Region::JapanNtsc)
    }
}

/// Battery-backed RAM declared by the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SramInfo {
    pub start: u32,
    pub end: u32,
    /// Only odd addresses (bits 4-3 of the type byte = 11).
    pub odd_only: bool,
    /// Only even addresses (bits 4-3 = 10).
    pub even_only: bool,
}

impl SramInfo {
    /// Bytes of storage.
    pub fn size(&self) -> usize {
        let span = (self.end - self.start) as usize + 1;
        if self.odd_only || self.even_only {
            span.div_ceil(2)
        } else {
            span
        }
    }
}

/// Parsed header fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub console: String,
    pub domestic_name: String,
    pub overseas_name: String,
    pub serial: String,
    pub checksum: u16,
    /// Raw region field (0x1F0, 3 bytes).
    pub region_field: String,
    pub sram: Option<SramInfo>,
}

/// A loaded cartridge image.
#[derive(Clone, Debug)]
pub struct Rom {
    pub path: PathBuf,
    pub data: Vec<u8>,
    pub header: Header,
    /// Sum of the words from 0x200 to the end, as the header checksum is
    /// defined.
    pub computed_checksum: u16,
}

fn text(b: &[u8]) -> String {
    b.iter()
        .map(|&c| match c {
            0 => ' ',
            0x20..=0x7E => c as char,
            _ => '.',
        })
        .collect::<String>()
        .trim()
        .to_string()
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Rom {
    /// Read and validate a ROM file.
    pub fn load(path: &Path) -> Result<Rom, RomError> {
        use std::io::Read;
        if path.is_dir() {
            return Err(RomError::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        let io = |source| RomError::Io {
            path: path.to_path_buf(),
            source,
        };
        // Check before opening and reading: a device or FIFO (an endless
        // stream, or one that blocks on open) is refused, and a file larger
        // than the mapper can address is never read in.
        if !std::fs::metadata(path).map_err(io)?.is_file() {
            return Err(RomError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.len() > MAX_ROM_BYTES as u64 {
            return Err(RomError::TooLarge {
                path: path.to_path_buf(),
                len: usize::try_from(meta.len()).unwrap_or(usize::MAX),
                max: MAX_ROM_BYTES,
            });
        }
        // At most one byte more than allowed, even if the file grows.
        let mut data = Vec::with_capacity(meta.len() as usize);
        file.take(MAX_ROM_BYTES as u64 + 1)
            .read_to_end(&mut data)
            .map_err(io)?;
        Rom::from_bytes(path, data)
    }

    /// Validate an image already in memory; `path` is used in messages.
    pub fn from_bytes(path: &Path, data: Vec<u8>) -> Result<Rom, RomError> {
        let p = || path.to_path_buf();
        let len = data.len();
        if len == 0 {
            return Err(RomError::Empty { path: p() });
        }
        if len < 0x200 {
            return Err(RomError::Truncated { path: p(), len });
        }
        if len > MAX_ROM_BYTES {
            return Err(RomError::TooLarge {
                path: p(),
                len,
                max: MAX_ROM_BYTES,
            });
        }
        if !len.is_multiple_of(2) {
            return Err(RomError::OddSize { path: p(), len });
        }
        let console = &data[0x100..0x110];
        if !console.windows(4).any(|w| w == b"SEGA") {
            if len % 0x4000 == 0x200 {
                return Err(RomError::Interleaved { path: p() });
            }
            return Err(RomError::BadHeader {
                path: p(),
                found: text(console),
            });
        }
        let sram = if &data[0x1B0..0x1B2] == b"RA" {
            let ty = data[0x1B2];
            let start = be32(&data, 0x1B4) & 0xFF_FFFF;
            let end = be32(&data, 0x1B8) & 0xFF_FFFF;
            if end >= start && end - start < 0x10_0000 {
                Some(SramInfo {
                    start,
                    end,
                    odd_only: (ty >> 3) & 3 == 3,
                    even_only: (ty >> 3) & 3 == 2,
                })
            } else {
                None
            }
        } else {
            None
        };
        let header = Header {
            console: text(console),
            domestic_name: text(&data[0x120..0x150]),
            overseas_name: text(&data[0x150..0x180]),
            serial: text(&data[0x180..0x18E]),
            checksum: u16::from_be_bytes([data[0x18E], data[0x18F]]),
            region_field: text(&data[0x1F0..0x1F3]),
            sram,
        };
        let computed_checksum = data[0x200..].chunks(2).fold(0u16, |s, w| {
            s.wrapping_add(u16::from_be_bytes([w[0], w[1]]))
        });
        Ok(Rom {
            path: path.to_path_buf(),
            data,
            header,
            computed_checksum,
        })
    }

    pub fn checksum_ok(&self) -> bool {
        self.header.checksum == self.computed_checksum
    }

    /// The reset vector: the initial program counter at 0x4 (the 68000
    /// reads SSP from 0x0 and PC from 0x4 at reset; M68000 User's Manual,
    /// "Reset"), 0 for an image shorter than 8 bytes.
    pub fn entry_point(&self) -> u32 {
        if self.data.len() >= 8 {
            be32(&self.data, 4)
        } else {
            0
        }
    }

    /// The game's name: the overseas name (0x150), or the domestic one
    /// (0x120) when the overseas one is blank.
    pub fn title(&self) -> &str {
        if self.header.overseas_name.trim().is_empty() {
            &self.header.domestic_name
        } else {
            &self.header.overseas_name
        }
    }

    /// The region of a console of the given video standard for this ROM
    /// (a region forced by the user): PAL is a European console; NTSC a
    /// Japanese one when the header asks for Japan ([`Rom::region`]), else
    /// an American one.
    pub fn region_with_standard(&self, pal: bool) -> Region {
        if pal {
            Region::EuropePal
        } else if self.region() == Region::JapanNtsc {
            Region::JapanNtsc
        } else {
            Region::UsaNtsc
        }
    }

    /// Region the header asks for: an overseas NTSC console when 'U' is
    /// listed (or the new-style hex digit has bit 2), else Japan when 'J'
    /// (bit 0), else Europe PAL when 'E' (bit 3); NTSC USA when unreadable.
    pub fn region(&self) -> Region {
        let f = self.header.region_field.as_bytes();
        let has = |c: u8| f.contains(&c);
        // New-style single hex digit (bit 0 Japan, bit 2 USA, bit 3 Europe).
        if f.len() == 1 && !has(b'J') && !has(b'U') && !has(b'E') {
            if let Some(d) = (f[0] as char).to_digit(16) {
                if d & 4 != 0 {
                    return Region::UsaNtsc;
                }
                if d & 1 != 0 {
                    return Region::JapanNtsc;
                }
                if d & 8 != 0 {
                    return Region::EuropePal;
                }
            }
        }
        if has(b'U') {
            Region::UsaNtsc
        } else if has(b'J') {
            Region::JapanNtsc
        } else if has(b'E') {
            Region::EuropePal
        } else {
            Region::UsaNtsc
        }
    }

    /// Whether the image needs the bank mapper (larger than 4 MB).
    pub fn needs_mapper(&self) -> bool {
        self.data.len() > LINEAR_ROM_BYTES
    }
}
