//! The bus both run-loop checks use: 64 KB of memory, every access logged
//! with its T-state, I/O reads answer the port's low byte, IM 2
//! acknowledges counted; `peek` on request (the idle-loop fast path) and
//! the steady-line promise as a const parameter (the interrupt gate).

use crate::host::TestBus;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Fetch(u16, u64),
    Read(u16, u64),
    Write(u16, u8, u64),
    IoRead(u16, u64),
    IoWrite(u16, u8, u64),
}

pub struct LogBus<const STEADY: bool> {
    pub mem: Vec<u8>,
    /// `peek` answers (the idle-loop fast path may skip fetches).
    pub peekable: bool,
    pub int: bool,
    pub log: Vec<Access>,
    /// IM 2 acknowledges (interrupts taken in mode 2).
    pub acks: u32,
}

impl<const STEADY: bool> LogBus<STEADY> {
    /// A bus over `mem` (64 KB), /INT low, nothing logged.
    pub fn new(mem: Vec<u8>, peekable: bool) -> Self {
        LogBus {
            mem,
            peekable,
            int: false,
            log: Vec::new(),
            acks: 0,
        }
    }
}

impl<const STEADY: bool> TestBus for LogBus<STEADY> {
    fn read(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.log.push(Access::Read(addr, *t));
        self.mem[addr as usize]
    }
    fn fetch(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.log.push(Access::Fetch(addr, *t));
        self.mem[addr as usize]
    }
    fn write(&mut self, addr: u16, value: u8, t: &mut u64) {
        self.log.push(Access::Write(addr, value, *t));
        self.mem[addr as usize] = value;
    }
    fn read_io(&mut self, port: u16, t: &mut u64) -> u8 {
        self.log.push(Access::IoRead(port, *t));
        port as u8
    }
    fn write_io(&mut self, port: u16, value: u8, t: &mut u64) {
        self.log.push(Access::IoWrite(port, value, *t));
    }
    fn int_line(&self) -> bool {
        self.int
    }
    fn int_vector(&mut self) -> u8 {
        self.acks += 1;
        0x40
    }
    fn peek(&self, addr: u16) -> Option<u8> {
        self.peekable.then(|| self.mem[addr as usize])
    }
    fn int_line_steady(&self) -> bool {
        STEADY
    }
}
