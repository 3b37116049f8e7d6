//! Shared code for the 68000 single-step conformance checks: the parser for
//! the collection's binary files (`../shared/m68000-tests/v1/*.json.bin`,
//! layout in `../shared/m68000-tests/README.md`), a recording bus, and the
//! comparison of one executed step against the expected final state.
//!
//! Used by `examples/m68000_single_step.rs` (the runner) and
//! `tests/core/conformance.rs` (the cargo test), both through `#[path]`.
//!
//! # What is compared
//! A test passes when all of these match:
//! - the 19 registers (d0-d7, a0-a6, usp, ssp, sr, pc) and both prefetch words;
//! - every memory word listed in the final state (memory the test does not
//!   list reads as 0, which is how the collection fills bytes it does not
//!   name), and no byte outside that list was changed to a non-zero value;
//! - the cycles returned by `step`, which must also equal the advance of
//!   `Cpu::cycles()`, against the test's `total_cycles`;
//! - the bus-cycle sequence, entry by entry.
//!
//! # Bus-cycle form (established from the data, see README.md in this dir)
//! Each read/write is one entry whose `cycles` is its length: 4 plus any wait
//! the bus imposed (the recording bus imposes none). Gaps between accesses
//! (internal operation) are single idle entries (kind 0) carrying the gap
//! length; a gap before the first access and after the last one (up to the
//! cycle count the step returned) are idle entries too. The entries' cycles
//! add up to `total_cycles` in every test of v1.
//! - Byte accesses show the even address (A0 is not on the bus) with UDS
//!   (even byte, data in bits 15-8) or LDS (odd byte, data in bits 7-0); the
//!   other lane reads as 0. Word accesses have UDS = LDS = 1.
//! - An address error attempt (`Bus::address_error`) is a 4-cycle entry of
//!   kind 4 (read) or 5 (write) at the given time, address with A0 cleared,
//!   UDS = LDS = 1. Its data is not compared: for reads the collection holds
//!   an arbitrary value, and the bus hook does not carry the write data.
//! - Kind 3 (TAS read-modify-write) does not occur in v1 (its TAS tests show
//!   a plain read, an idle and a write). Should an expected kind-3 entry
//!   appear, it matches a recorded read, optional idle and write of the same
//!   address whose cycles add up to the entry's.

#![allow(dead_code)]

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use retroprof_m68k::{Bus, ExceptionKind, FunctionCode, IntAck, Observer, Read, Registers, Write};

// The including crate's `Cpu`: the real one in the runner, the one
// `&mut dyn Bus` instantiation of the core in the test binary
// (`tests/core/host.rs`).
use super::Cpu;

pub const FILE_MAGIC: u32 = 0x1A3F_5D71;
pub const TEST_MAGIC: u32 = 0xABC1_2367;
pub const NAME_MAGIC: u32 = 0x89AB_CDEF;
pub const STATE_MAGIC: u32 = 0x0123_4567;
pub const TRANS_MAGIC: u32 = 0x4567_89AB;

pub const KIND_IDLE: u8 = 0;
pub const KIND_WRITE: u8 = 1;
pub const KIND_READ: u8 = 2;
pub const KIND_TAS: u8 = 3;
pub const KIND_READ_AE: u8 = 4;
pub const KIND_WRITE_AE: u8 = 5;

/// Default location of the collection, relative to this crate.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/m68000-tests/v1")
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
pub struct ParseError {
    pub file: PathBuf,
    pub offset: usize,
    pub what: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: at byte offset {}: {}",
            self.file.display(),
            self.offset,
            self.what
        )
    }
}

impl std::error::Error for ParseError {}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    pub regs: Registers,
    /// (even address, word) as listed.
    pub mem: Vec<(u32, u16)>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub kind: u8,
    /// Length in cycles (signed: a recorded access that overlaps the previous
    /// one, or runs past the step's end, shows up as a negative idle).
    pub cycles: i64,
    pub fc: u8,
    pub addr: u32,
    pub data: u32,
    pub uds: u8,
    pub lds: u8,
}

#[derive(Clone, Debug, Default)]
pub struct Test {
    pub name: String,
    pub initial: State,
    pub fin: State,
    pub total_cycles: u32,
    pub transactions: Vec<Entry>,
}

impl Test {
    /// The test ends in (or passes through) an address-error exception.
    pub fn is_address_error(&self) -> bool {
        self.transactions
            .iter()
            .any(|e| e.kind == KIND_READ_AE || e.kind == KIND_WRITE_AE)
    }
}

#[derive(Clone, Debug, Default)]
pub struct TestFile {
    /// File name, e.g. `MOVE.w.json.bin`.
    pub name: String,
    pub tests: Vec<Test>,
}

impl TestFile {
    /// The file name without `.json.bin`, e.g. `MOVE.w`.
    pub fn stem(&self) -> &str {
        file_stem(&self.name)
    }
}

pub fn file_stem(name: &str) -> &str {
    name.strip_suffix(".json.bin").unwrap_or(name)
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    file: &'a Path,
}

impl<'a> Reader<'a> {
    fn err(&self, offset: usize, what: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_path_buf(),
            offset,
            what: what.into(),
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ParseError> {
        if self.buf.len() - self.pos < n {
            return Err(self.err(
                self.pos,
                format!(
                    "truncated: expected {n} bytes of {what}, only {} left",
                    self.buf.len() - self.pos
                ),
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self, what: &str) -> Result<u8, ParseError> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16(&mut self, what: &str) -> Result<u16, ParseError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// Reads a block header (length + magic); returns the block's end offset.
    fn block(&mut self, magic: u32, what: &str) -> Result<usize, ParseError> {
        let start = self.pos;
        let len = self.u32(&format!("{what} block length"))? as usize;
        let m = self.u32(&format!("{what} block magic"))?;
        if m != magic {
            return Err(self.err(
                start + 4,
                format!("bad {what} block magic: expected {magic:#010x}, found {m:#010x}"),
            ));
        }
        let end = start.checked_add(len).filter(|&e| e <= self.buf.len());
        match end {
            Some(e) if len >= 8 => Ok(e),
            _ => Err(self.err(
                start,
                format!(
                    "{what} block length {len} does not fit the file (block at {start}, file is {} bytes)",
                    self.buf.len()
                ),
            )),
        }
    }

    fn end_block(&mut self, end: usize, what: &str) -> Result<(), ParseError> {
        if self.pos != end {
            return Err(self.err(
                self.pos,
                format!(
                    "{what} block: contents end at {} but its length says {end}",
                    self.pos
                ),
            ));
        }
        Ok(())
    }

    fn state(&mut self) -> Result<State, ParseError> {
        let end = self.block(STATE_MAGIC, "state")?;
        let mut r = [0u32; 19];
        for v in r.iter_mut() {
            *v = self.u32("register")?;
        }
        let mut regs = Registers::default();
        regs.d.copy_from_slice(&r[0..8]);
        regs.a.copy_from_slice(&r[8..15]);
        regs.usp = r[15];
        regs.ssp = r[16];
        let sr_at = self.pos - 8;
        if r[17] > 0xffff {
            return Err(self.err(sr_at, format!("sr {:#x} does not fit 16 bits", r[17])));
        }
        regs.sr = r[17] as u16;
        regs.pc = r[18];
        for i in 0..2 {
            let at = self.pos;
            let p = self.u32("prefetch word")?;
            if p > 0xffff {
                return Err(self.err(at, format!("prefetch word {p:#x} does not fit 16 bits")));
            }
            regs.prefetch[i] = p as u16;
        }
        let n_at = self.pos;
        let n = self.u32("memory word count")? as usize;
        if n > (end - self.pos) / 6 {
            return Err(self.err(
                n_at,
                format!("memory word count {n} exceeds the state block"),
            ));
        }
        let mut mem = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos;
            let a = self.u32("memory address")?;
            let w = self.u16("memory word")?;
            if a > 0xff_ffff || a & 1 != 0 {
                return Err(self.err(
                    at,
                    format!("memory address {a:#x} is not an even 24-bit address"),
                ));
            }
            mem.push((a, w));
        }
        self.end_block(end, "state")?;
        Ok(State { regs, mem })
    }

    fn transactions(&mut self) -> Result<(u32, Vec<Entry>), ParseError> {
        let end = self.block(TRANS_MAGIC, "transactions")?;
        let total = self.u32("total cycles")?;
        let n_at = self.pos;
        let n = self.u32("transaction count")? as usize;
        if n > (end - self.pos) / 5 {
            return Err(self.err(n_at, format!("transaction count {n} exceeds the block")));
        }
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.pos;
            let kind = self.u8("transaction kind")?;
            let cycles = self.u32("transaction cycles")? as i64;
            let mut e = Entry {
                kind,
                cycles,
                ..Entry::default()
            };
            match kind {
                KIND_IDLE => {}
                1..=5 => {
                    let fc = self.u32("function code")?;
                    e.addr = self.u32("address")?;
                    e.data = self.u32("data")?;
                    let uds = self.u32("uds")?;
                    let lds = self.u32("lds")?;
                    if fc > 7 || uds > 1 || lds > 1 {
                        return Err(self.err(
                            at,
                            format!("transaction with fc {fc}, uds {uds}, lds {lds} out of range"),
                        ));
                    }
                    e.fc = fc as u8;
                    e.uds = uds as u8;
                    e.lds = lds as u8;
                }
                k => return Err(self.err(at, format!("unknown transaction kind {k} (0-5)"))),
            }
            v.push(e);
        }
        self.end_block(end, "transactions")?;
        Ok((total, v))
    }

    fn test(&mut self) -> Result<Test, ParseError> {
        let end = self.block(TEST_MAGIC, "test")?;
        let nend = self.block(NAME_MAGIC, "name")?;
        let len = self.u32("name length")? as usize;
        let at = self.pos;
        let bytes = self.take(len, "name")?;
        let name = std::str::from_utf8(bytes)
            .map_err(|e| self.err(at, format!("test name is not UTF-8: {e}")))?
            .to_string();
        self.end_block(nend, "name")?;
        let initial = self.state()?;
        let fin = self.state()?;
        let (total_cycles, transactions) = self.transactions()?;
        self.end_block(end, "test")?;
        Ok(Test {
            name,
            initial,
            fin,
            total_cycles,
            transactions,
        })
    }
}

/// Parses one collection file from memory. `path` is used in errors and for
/// the file name.
pub fn parse_file(path: &Path, buf: &[u8]) -> Result<TestFile, ParseError> {
    let mut r = Reader {
        buf,
        pos: 0,
        file: path,
    };
    let m = r.u32("file magic")?;
    if m != FILE_MAGIC {
        return Err(r.err(
            0,
            format!("bad file magic: expected {FILE_MAGIC:#010x}, found {m:#010x}"),
        ));
    }
    let count = r.u32("test count")? as usize;
    // A test is far more than 16 bytes; refuse absurd counts before allocating.
    if count > buf.len() / 16 {
        return Err(r.err(
            4,
            format!("test count {count} is larger than the file allows"),
        ));
    }
    let mut tests = Vec::with_capacity(count);
    for _ in 0..count {
        tests.push(r.test()?);
    }
    if r.pos != buf.len() {
        return Err(r.err(
            r.pos,
            format!(
                "{} bytes of trailing data after {count} tests",
                buf.len() - r.pos
            ),
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(TestFile { name, tests })
}

/// Reads and parses one file.
pub fn load_file(path: &Path) -> Result<TestFile, ParseError> {
    let buf = std::fs::read(path).map_err(|e| ParseError {
        file: path.to_path_buf(),
        offset: 0,
        what: format!("cannot read: {e}"),
    })?;
    parse_file(path, &buf)
}

/// The collection's files in `dir` (`*.json.bin`), sorted by name.
pub fn list_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "cannot read the 68000 test directory {}: {e} (expected the SingleStepTests \
             collection at ../shared/m68000-tests/v1 next to the repository)",
            dir.display()
        )
    })?;
    let mut v = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| format!("{}: {e}", dir.display()))?;
        let p = ent.path();
        if p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".json.bin"))
        {
            v.push(p);
        }
    }
    v.sort();
    if v.is_empty() {
        return Err(format!("no *.json.bin files in {}", dir.display()));
    }
    Ok(v)
}

// ---------------------------------------------------------------------------
// Recording bus
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub kind: u8,
    pub fc: u8,
    /// Address as the core passed it (before any masking), A0 cleared.
    pub addr: u32,
    pub data: u32,
    pub uds: u8,
    pub lds: u8,
    pub start: u64,
    pub len: u32,
}

/// A flat sparse memory over the test's listed bytes plus a log of every
/// bus access. Unlisted bytes read as 0.
#[derive(Default)]
pub struct RecordingBus {
    /// Sorted by address (24-bit byte address).
    mem: Vec<(u32, u8)>,
    pub log: Vec<Access>,
    /// Contract violations and unusual calls, for the detailed report.
    pub notes: Vec<String>,
    /// Number of byte reads of addresses the test did not list.
    pub unlisted_reads: u32,
    /// Take [`Bus::read_long_plain`] / [`Bus::write_long_plain`] (as the
    /// console's bus does for work RAM): each as the two word accesses
    /// the contract names, recorded the same way.
    pub long_plain: bool,
}

impl RecordingBus {
    pub fn new(state: &State) -> Self {
        let mut mem = Vec::with_capacity(state.mem.len() * 2);
        for &(a, w) in &state.mem {
            mem.push((a & 0xff_fffe, (w >> 8) as u8));
            mem.push(((a & 0xff_fffe) | 1, w as u8));
        }
        mem.sort_by_key(|&(a, _)| a);
        mem.dedup_by_key(|&mut (a, _)| a);
        RecordingBus {
            mem,
            ..Default::default()
        }
    }

    pub fn peek(&self, addr: u32) -> Option<u8> {
        let addr = addr & 0xff_ffff;
        self.mem
            .binary_search_by_key(&addr, |&(a, _)| a)
            .ok()
            .map(|i| self.mem[i].1)
    }

    fn get(&mut self, addr: u32) -> u8 {
        match self.peek(addr) {
            Some(v) => v,
            None => {
                self.unlisted_reads += 1;
                0
            }
        }
    }

    fn set(&mut self, addr: u32, v: u8) {
        let addr = addr & 0xff_ffff;
        match self.mem.binary_search_by_key(&addr, |&(a, _)| a) {
            Ok(i) => self.mem[i].1 = v,
            Err(i) => self.mem.insert(i, (addr, v)),
        }
    }

    /// All bytes currently held (listed or written), sorted by address.
    pub fn bytes(&self) -> &[(u32, u8)] {
        &self.mem
    }

    fn record(
        &mut self,
        kind: u8,
        fc: FunctionCode,
        addr: u32,
        data: u32,
        lanes: (u8, u8),
        now: u64,
    ) {
        self.log.push(Access {
            kind,
            fc: fc as u8,
            addr,
            data,
            uds: lanes.0,
            lds: lanes.1,
            start: now,
            // A bus cycle without waits is 4 clocks (bus.rs contract; M68000
            // user's manual, section 5 "Bus operation"); this bus adds none.
            len: 4,
        });
    }
}

impl Bus for RecordingBus {
    fn read_byte(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8> {
        let v = self.get(addr);
        if addr & 1 == 0 {
            self.record(KIND_READ, fc, addr, (v as u32) << 8, (1, 0), now);
        } else {
            self.record(KIND_READ, fc, addr & !1, v as u32, (0, 1), now);
        }
        Read::ok(v)
    }

    fn read_word(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16> {
        if addr & 1 != 0 {
            self.notes.push(format!(
                "read_word at odd address {addr:#x} (contract: core raises address errors)"
            ));
        }
        let hi = self.get(addr & !1);
        let lo = self.get(addr | 1);
        let v = u16::from_be_bytes([hi, lo]);
        self.record(KIND_READ, fc, addr, v as u32, (1, 1), now);
        Read::ok(v)
    }

    fn write_byte(&mut self, addr: u32, data: u8, fc: FunctionCode, now: u64) -> Write {
        self.set(addr, data);
        if addr & 1 == 0 {
            self.record(KIND_WRITE, fc, addr, (data as u32) << 8, (1, 0), now);
        } else {
            self.record(KIND_WRITE, fc, addr & !1, data as u32, (0, 1), now);
        }
        Write::OK
    }

    fn write_word(&mut self, addr: u32, data: u16, fc: FunctionCode, now: u64) -> Write {
        if addr & 1 != 0 {
            self.notes.push(format!(
                "write_word at odd address {addr:#x} (contract: core raises address errors)"
            ));
        }
        let [hi, lo] = data.to_be_bytes();
        self.set(addr & !1, hi);
        self.set(addr | 1, lo);
        self.record(KIND_WRITE, fc, addr, data as u32, (1, 1), now);
        Write::OK
    }

    fn read_long_plain(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Option<u32> {
        if !self.long_plain {
            return None;
        }
        if addr & 1 != 0 || addr > 0xFF_FFFF {
            self.notes.push(format!(
                "read_long_plain at {addr:#x} (contract: even 24-bit address)"
            ));
        }
        let hi = self.read_word(addr, fc, now).data as u32;
        let lo = self
            .read_word(addr.wrapping_add(2) & 0xFF_FFFF, fc, now + 4)
            .data as u32;
        Some(hi << 16 | lo)
    }

    fn write_long_plain(
        &mut self,
        addr: u32,
        data: u32,
        low_first: bool,
        fc: FunctionCode,
        now: u64,
    ) -> bool {
        if !self.long_plain {
            return false;
        }
        if addr & 1 != 0 || addr > 0xFF_FFFF {
            self.notes.push(format!(
                "write_long_plain at {addr:#x} (contract: even 24-bit address)"
            ));
        }
        let lo_addr = addr.wrapping_add(2) & 0xFF_FFFF;
        if low_first {
            self.write_word(lo_addr, data as u16, fc, now);
            self.write_word(addr, (data >> 16) as u16, fc, now + 4);
        } else {
            self.write_word(addr, (data >> 16) as u16, fc, now);
            self.write_word(lo_addr, data as u16, fc, now + 4);
        }
        true
    }

    fn interrupt_ack(&mut self, level: u8, now: u64) -> IntAck {
        self.notes.push(format!(
            "interrupt_ack({level}) at {now} although IPL is always 0"
        ));
        IntAck::Autovector
    }

    fn address_error(&mut self, addr: u32, fc: FunctionCode, is_write: bool, now: u64) {
        let kind = if is_write {
            KIND_WRITE_AE
        } else {
            KIND_READ_AE
        };
        self.record(kind, fc, addr & !1, 0, (1, 1), now);
    }

    fn halted(&mut self, now: u64) {
        self.notes.push(format!("CPU halted at {now}"));
    }
}

/// Turns the recorded accesses of one step into the collection's form.
pub fn to_entries(log: &[Access], start: u64, cycles: u64) -> Vec<Entry> {
    let mut out = Vec::with_capacity(log.len() * 2 + 1);
    let mut t = start as i64;
    for a in log {
        let s = a.start as i64;
        if s != t {
            out.push(Entry {
                kind: KIND_IDLE,
                cycles: s - t,
                ..Entry::default()
            });
        }
        out.push(Entry {
            kind: a.kind,
            cycles: a.len as i64,
            fc: a.fc,
            addr: a.addr,
            data: a.data,
            uds: a.uds,
            lds: a.lds,
        });
        t = s + a.len as i64;
    }
    let end = (start + cycles) as i64;
    if end != t {
        out.push(Entry {
            kind: KIND_IDLE,
            cycles: end - t,
            ..Entry::default()
        });
    }
    out
}

fn entry_matches(exp: &Entry, got: &Entry) -> bool {
    if exp.kind != got.kind || exp.cycles != got.cycles {
        return false;
    }
    if exp.kind == KIND_IDLE {
        return true;
    }
    let data_ok = matches!(exp.kind, KIND_READ_AE | KIND_WRITE_AE) || exp.data == got.data;
    exp.fc == got.fc && exp.addr == got.addr && exp.uds == got.uds && exp.lds == got.lds && data_ok
}

/// Compares two transaction lists; returns the index (in `exp`) of the first
/// difference, or `None` when they match.
pub fn compare_entries(exp: &[Entry], got: &[Entry]) -> Option<usize> {
    let mut j = 0;
    for (i, e) in exp.iter().enumerate() {
        if e.kind == KIND_TAS {
            // read, optional idle, write of the same address.
            let Some(r) = got.get(j).filter(|r| r.kind == KIND_READ) else {
                return Some(i);
            };
            let mut k = j + 1;
            let mut cycles = r.cycles;
            if let Some(idle) = got.get(k).filter(|x| x.kind == KIND_IDLE) {
                cycles += idle.cycles;
                k += 1;
            }
            let Some(w) = got
                .get(k)
                .filter(|w| w.kind == KIND_WRITE && w.addr == r.addr)
            else {
                return Some(i);
            };
            cycles += w.cycles;
            if r.addr != e.addr || r.fc != e.fc || cycles != e.cycles {
                return Some(i);
            }
            j = k + 1;
            continue;
        }
        match got.get(j) {
            Some(g) if entry_matches(e, g) => j += 1,
            _ => return Some(i),
        }
    }
    if j != got.len() {
        return Some(exp.len());
    }
    None
}

// ---------------------------------------------------------------------------
// Running one test
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub regs_ok: bool,
    pub mem_ok: bool,
    pub cycles_ok: bool,
    pub bus_ok: bool,
    /// Observer instruction + exception cycles equal the step's cycles
    /// (informational: not part of `passed`).
    pub observer_ok: bool,
    /// The core panicked (message); everything else is then false.
    pub panic: Option<String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.regs_ok && self.mem_ok && self.cycles_ok && self.bus_ok && self.panic.is_none()
    }
}

/// One observer call (not part of pass/fail: reported separately, since
/// the profiler relies on instruction + exception cycles covering the step).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    Instruction {
        pc: u32,
        cycles: u32,
    },
    Exception {
        kind: ExceptionKind,
        vector: u8,
        handler: u32,
        cycles: u32,
    },
    Call {
        from_pc: u32,
        target: u32,
        return_addr: u32,
        sp: u32,
    },
    Ret {
        from_pc: u32,
        target: u32,
        sp: u32,
    },
}

#[derive(Default)]
pub struct RecordingObserver {
    pub calls: Vec<Observed>,
}

impl Observer for RecordingObserver {
    fn instruction(&mut self, pc: u32, cycles: u32) {
        self.calls.push(Observed::Instruction { pc, cycles });
    }
    fn exception(&mut self, kind: ExceptionKind, vector: u8, handler: u32, cycles: u32) {
        self.calls.push(Observed::Exception {
            kind,
            vector,
            handler,
            cycles,
        });
    }
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        self.calls.push(Observed::Call {
            from_pc,
            target,
            return_addr,
            sp,
        });
    }
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.calls.push(Observed::Ret {
            from_pc,
            target,
            sp,
        });
    }
}

/// Sum of the instruction and exception cycles the observer was told.
pub fn observed_cycles(calls: &[Observed]) -> u64 {
    calls
        .iter()
        .map(|c| match c {
            Observed::Instruction { cycles, .. } | Observed::Exception { cycles, .. } => {
                *cycles as u64
            }
            _ => 0,
        })
        .sum()
}

/// Everything observed while running one test, for reports.
pub struct Run {
    /// What the observer was told during the step.
    pub observed: Vec<Observed>,
    pub outcome: Outcome,
    pub regs: Registers,
    pub step_cycles: u32,
    pub clock_advance: u64,
    pub entries: Vec<Entry>,
    pub bus: RecordingBus,
}

const REG_NAMES: [&str; 19] = [
    "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
    "usp", "ssp", "sr", "pc",
];

pub fn reg_list(r: &Registers) -> [u32; 21] {
    let mut v = [0u32; 21];
    v[..8].copy_from_slice(&r.d);
    v[8..15].copy_from_slice(&r.a);
    v[15] = r.usp;
    v[16] = r.ssp;
    v[17] = r.sr as u32;
    v[18] = r.pc;
    v[19] = r.prefetch[0] as u32;
    v[20] = r.prefetch[1] as u32;
    v
}

fn reg_name(i: usize) -> &'static str {
    match i {
        19 => "prefetch[0]",
        20 => "prefetch[1]",
        _ => REG_NAMES[i],
    }
}

/// Memory differences: (address, expected word, got word) for listed words,
/// plus unlisted bytes that were written non-zero (expected 0).
pub fn memory_diffs(t: &Test, bus: &RecordingBus) -> Vec<(u32, u16, u16)> {
    let mut diffs = Vec::new();
    let mut listed: Vec<u32> = Vec::with_capacity(t.fin.mem.len());
    for &(a, w) in &t.fin.mem {
        let hi = bus.peek(a).unwrap_or(0);
        let lo = bus.peek(a | 1).unwrap_or(0);
        let got = u16::from_be_bytes([hi, lo]);
        if got != w {
            diffs.push((a, w, got));
        }
        listed.push(a);
    }
    listed.sort_unstable();
    for &(a, v) in bus.bytes() {
        if v != 0 && listed.binary_search(&(a & !1)).is_err() {
            let hi = bus.peek(a & !1).unwrap_or(0);
            let lo = bus.peek(a | 1).unwrap_or(0);
            let got = u16::from_be_bytes([hi, lo]);
            if diffs.last().map(|d| d.0) != Some(a & !1) {
                diffs.push((a & !1, 0, got));
            }
        }
    }
    diffs
}

/// Runs one test on a fresh CPU and compares the result. Panics in the core
/// propagate (callers catch them, see [`run_test_catching`]).
pub fn run_test(t: &Test) -> Run {
    let mut run = run_test_on(t, true);
    // Both ways: the long accesses as one bus call each (what the console
    // does for work RAM) and as two word accesses; everything the step
    // shows must be the same.
    let words = run_test_on(t, false);
    if words.entries != run.entries
        || reg_list(&words.regs) != reg_list(&run.regs)
        || words.step_cycles != run.step_cycles
        || words.bus.bytes() != run.bus.bytes()
        || words.observed != run.observed
    {
        run.outcome.bus_ok = false;
        run.bus.notes.push(
            "the step differs with long accesses as two word accesses (Bus::read_long_plain)"
                .to_string(),
        );
    }
    run
}

fn run_test_on(t: &Test, long_plain: bool) -> Run {
    let mut bus = RecordingBus::new(&t.initial);
    bus.long_plain = long_plain;
    let mut cpu = Cpu::new();
    cpu.set_registers(&t.initial.regs);
    let start = cpu.cycles();
    let mut obs = RecordingObserver::default();
    let step_cycles = cpu.step(&mut bus, &mut obs);
    let clock_advance = cpu.cycles().wrapping_sub(start);
    let regs = cpu.registers();
    let entries = to_entries(&bus.log, start, step_cycles as u64);
    let outcome = Outcome {
        regs_ok: reg_list(&regs) == reg_list(&t.fin.regs),
        mem_ok: memory_diffs(t, &bus).is_empty(),
        cycles_ok: step_cycles == t.total_cycles && clock_advance == step_cycles as u64,
        bus_ok: compare_entries(&t.transactions, &entries).is_none(),
        observer_ok: observed_cycles(&obs.calls) == step_cycles as u64,
        panic: None,
    };
    Run {
        outcome,
        regs,
        step_cycles,
        clock_advance,
        observed: obs.calls,
        entries,
        bus,
    }
}

thread_local! {
    static QUIET_PANICS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent for panics caught by
/// [`run_test_catching`] and defers to the previous hook otherwise.
pub fn install_quiet_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_PANICS.with(|q| q.get()) {
                prev(info);
            }
        }));
    });
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Like [`run_test`], but a panic in the core becomes a failed outcome.
pub fn run_test_catching(t: &Test) -> Result<Run, String> {
    QUIET_PANICS.with(|q| q.set(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_test(t)));
    QUIET_PANICS.with(|q| q.set(false));
    r.map_err(|p| panic_message(&*p))
}

/// The outcome of one test (panics caught).
pub fn check(t: &Test) -> Outcome {
    match run_test_catching(t) {
        Ok(r) => r.outcome,
        Err(msg) => Outcome {
            panic: Some(msg),
            ..Outcome::default()
        },
    }
}

// ---------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------

fn fmt_entry(e: &Entry) -> String {
    match e.kind {
        KIND_IDLE => format!("idle  {:>4}", e.cycles),
        k => {
            let name = match k {
                KIND_WRITE => "write",
                KIND_READ => "read ",
                KIND_TAS => "tas  ",
                KIND_READ_AE => "rd-AE",
                KIND_WRITE_AE => "wr-AE",
                _ => "?????",
            };
            let data = if matches!(k, KIND_READ_AE | KIND_WRITE_AE) {
                "----".to_string()
            } else {
                format!("{:04x}", e.data)
            };
            format!(
                "{name} {:>4} fc{} {:06x} {data} {}{}",
                e.cycles,
                e.fc,
                e.addr,
                if e.uds != 0 { 'U' } else { '-' },
                if e.lds != 0 { 'L' } else { '-' },
            )
        }
    }
}

/// One-line description of the first difference (for the known-failures list).
pub fn first_difference(t: &Test) -> String {
    let run = match run_test_catching(t) {
        Ok(r) => r,
        Err(msg) => return format!("panic: {}", msg.replace(['\n', '|'], " ")),
    };
    let exp = reg_list(&t.fin.regs);
    let got = reg_list(&run.regs);
    if let Some(i) = (0..21).find(|&i| exp[i] != got[i]) {
        return format!("{} expected {:#x} got {:#x}", reg_name(i), exp[i], got[i]);
    }
    if let Some(&(a, e, g)) = memory_diffs(t, &run.bus).first() {
        return format!("memory {a:06x} expected {e:04x} got {g:04x}");
    }
    if !run.outcome.cycles_ok {
        return format!(
            "cycles expected {} got {} (clock advanced {})",
            t.total_cycles, run.step_cycles, run.clock_advance
        );
    }
    if let Some(i) = compare_entries(&t.transactions, &run.entries) {
        let e = t
            .transactions
            .get(i)
            .map(fmt_entry)
            .unwrap_or_else(|| "(end)".into());
        let g = run
            .entries
            .get(i)
            .map(fmt_entry)
            .unwrap_or_else(|| "(end)".into());
        return format!("bus entry {i} expected [{e}] got [{g}]");
    }
    "passes".to_string()
}

/// Multi-line report of one test: what differs, register diff, memory diff,
/// and the expected vs recorded transaction lists side by side.
pub fn detail(file: &str, index: usize, t: &Test) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "FAIL {file} #{index} \"{}\"{}",
        t.name,
        if t.is_address_error() {
            " [address error]"
        } else {
            ""
        }
    );
    let run = match run_test_catching(t) {
        Ok(r) => r,
        Err(msg) => {
            let _ = writeln!(s, "  core panicked: {msg}");
            return s;
        }
    };
    let o = &run.outcome;
    let mut parts = Vec::new();
    if !o.regs_ok {
        parts.push("registers");
    }
    if !o.mem_ok {
        parts.push("memory");
    }
    if !o.cycles_ok {
        parts.push("cycles");
    }
    if !o.bus_ok {
        parts.push("bus cycles");
    }
    let _ = writeln!(
        s,
        "  differs in: {}",
        if parts.is_empty() {
            "nothing (passes)".to_string()
        } else {
            parts.join(", ")
        }
    );
    let ini = reg_list(&t.initial.regs);
    let exp = reg_list(&t.fin.regs);
    let got = reg_list(&run.regs);
    let _ = writeln!(s, "  registers (initial / expected / got):");
    for i in 0..21 {
        let mark = if exp[i] != got[i] { '*' } else { ' ' };
        if exp[i] != got[i] || ini[i] != exp[i] || i >= 17 {
            let _ = writeln!(
                s,
                "   {mark} {:<11} {:08x}  {:08x}  {:08x}",
                reg_name(i),
                ini[i],
                exp[i],
                got[i]
            );
        }
    }
    let _ = writeln!(
        s,
        "  cycles: expected {}, step returned {}, clock advanced {}",
        t.total_cycles, run.step_cycles, run.clock_advance
    );
    let md = memory_diffs(t, &run.bus);
    if !md.is_empty() {
        let _ = writeln!(s, "  memory (address: expected got):");
        for (a, e, g) in md {
            let _ = writeln!(s, "   * {a:06x}: {e:04x} {g:04x}");
        }
    }
    let first = compare_entries(&t.transactions, &run.entries);
    let _ = writeln!(
        s,
        "  bus cycles ({}):",
        match first {
            None => "match".to_string(),
            Some(i) => format!("first difference at entry {i}"),
        }
    );
    let _ = writeln!(s, "     #  {:<36} got", "expected");
    let n = t.transactions.len().max(run.entries.len());
    for i in 0..n {
        let e = t.transactions.get(i).map(fmt_entry).unwrap_or_default();
        let g = run.entries.get(i).map(fmt_entry).unwrap_or_default();
        let mark = match (t.transactions.get(i), run.entries.get(i)) {
            (Some(a), Some(b)) if entry_matches(a, b) => ' ',
            _ => '*',
        };
        let _ = writeln!(s, "   {mark}{i:>3}  {e:<36} {g}");
    }
    let oc = observed_cycles(&run.observed);
    let _ = writeln!(
        s,
        "  observer ({} cycles{}):",
        oc,
        if oc == run.step_cycles as u64 {
            ", as the step".to_string()
        } else {
            format!(", the step took {}", run.step_cycles)
        }
    );
    for c in &run.observed {
        let _ = match c {
            Observed::Instruction { pc, cycles } => {
                writeln!(s, "     instruction pc {pc:06x} cycles {cycles}")
            }
            Observed::Exception {
                kind,
                vector,
                handler,
                cycles,
            } => writeln!(
                s,
                "     exception {kind:?} vector {vector} handler {handler:06x} cycles {cycles}"
            ),
            Observed::Call {
                from_pc,
                target,
                return_addr,
                sp,
            } => writeln!(
                s,
                "     call from {from_pc:06x} to {target:06x} return {return_addr:06x} sp {sp:06x}"
            ),
            Observed::Ret {
                from_pc,
                target,
                sp,
            } => {
                writeln!(s, "     ret from {from_pc:06x} to {target:06x} sp {sp:06x}")
            }
        };
    }
    for n in &run.bus.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    if run.bus.unlisted_reads > 0 {
        let _ = writeln!(
            s,
            "  note: {} byte read(s) of memory the test does not list (read as 0)",
            run.bus.unlisted_reads
        );
    }
    s
}

// ---------------------------------------------------------------------------
// Whole-file runs
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, Default)]
pub struct FileResult {
    pub name: String,
    pub total: usize,
    pub passed: usize,
    pub ae_total: usize,
    pub ae_passed: usize,
    pub bus_matched: usize,
    pub regs_failed: usize,
    pub mem_failed: usize,
    pub cycles_failed: usize,
    pub bus_failed: usize,
    pub panics: usize,
    /// Tests (passing or not) whose observer cycles differ from the step's.
    pub observer_mismatch: usize,
    /// Indices of failing tests.
    pub failing: Vec<usize>,
    /// Indices of tests whose observer cycles differ from the step's.
    pub observer_failing: Vec<usize>,
}

impl FileResult {
    pub fn failed(&self) -> usize {
        self.total - self.passed
    }
}

/// Runs the tests of `f` accepted by `filter` and summarises.
pub fn run_file(f: &TestFile, filter: impl Fn(&Test) -> bool) -> FileResult {
    install_quiet_panic_hook();
    let mut r = FileResult {
        name: f.name.clone(),
        ..FileResult::default()
    };
    for (i, t) in f.tests.iter().enumerate() {
        if !filter(t) {
            continue;
        }
        let o = check(t);
        let ae = t.is_address_error();
        r.total += 1;
        r.ae_total += ae as usize;
        if o.passed() {
            r.passed += 1;
            r.ae_passed += ae as usize;
        } else {
            r.failing.push(i);
        }
        if o.panic.is_some() {
            r.panics += 1;
        } else {
            if !o.observer_ok {
                r.observer_mismatch += 1;
                r.observer_failing.push(i);
            }
            r.bus_matched += o.bus_ok as usize;
            r.regs_failed += !o.regs_ok as usize;
            r.mem_failed += !o.mem_ok as usize;
            r.cycles_failed += !o.cycles_ok as usize;
            r.bus_failed += !o.bus_ok as usize;
        }
    }
    r
}

impl fmt::Display for FileResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<14} {:>5} passed {:>5} failed of {:>5}; address-error {:>4} of {:>4}",
            file_stem(&self.name),
            self.passed,
            self.failed(),
            self.total,
            self.ae_passed,
            self.ae_total,
        )?;
        if self.failed() > 0 {
            write!(
                f,
                "; failing parts: regs {} mem {} cycles {} bus {}",
                self.regs_failed, self.mem_failed, self.cycles_failed, self.bus_failed
            )?;
            if self.panics > 0 {
                write!(f, " panics {}", self.panics)?;
            }
        }
        if self.observer_mismatch > 0 {
            write!(
                f,
                "; observer cycles differ from the step in {}",
                self.observer_mismatch
            )?;
        }
        Ok(())
    }
}

/// The summary line, in exactly the form the task defines.
pub fn total_line(results: &[FileResult]) -> String {
    let p: usize = results.iter().map(|r| r.passed).sum();
    let n: usize = results.iter().map(|r| r.total).sum();
    let pa: usize = results.iter().map(|r| r.ae_passed).sum();
    let na: usize = results.iter().map(|r| r.ae_total).sum();
    let b: usize = results.iter().map(|r| r.bus_matched).sum();
    format!(
        "total: {p} passed, {} failed of {n}; address-error cases: {pa} passed of {na}; bus cycles matched in {b}",
        n - p
    )
}

/// Runs `job(i)` for i in 0..n on `threads` threads, handing out indices in
/// order; results come back in index order. `stop` lets a job ask that no
/// further indices be started.
pub fn parallel_map<T: Send>(
    n: usize,
    threads: usize,
    stop: &std::sync::atomic::AtomicBool,
    job: impl Fn(usize) -> T + Sync,
) -> Vec<Option<T>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let v = job(i);
                out.lock().unwrap()[i] = Some(v);
            });
        }
    });
    out.into_inner().unwrap()
}

/// Number of worker threads: `RETROPROF_THREADS` or the available cores.
pub fn thread_count() -> usize {
    std::env::var("RETROPROF_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
        .max(1)
}
