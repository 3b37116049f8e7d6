//! The I/O chip: version register and the two controller ports with 3- and
//! 6-button pads.
//!
//! Protocol (public pad documentation, e.g. plutiedev "Controllers",
//! Charles MacDonald's "Sega Genesis I/O chip"): the data port's bit 6 is TH;
//! with TH high a pad reports `?1CBRLDU`, with TH low `?0SA00DU` (active
//! low). A 6-button pad counts TH transitions: the third low phase reads
//! `?0SA0000` (the 6-button signature), the following high phase `?1CBMXYZ`,
//! the next low phase `?0SA1111`. The count resets when TH has not changed
//! for about 1.5 ms ([`crate::timing::PAD6_TIMEOUT_MCLK`]).

use crate::input::Buttons;
use crate::timing::PAD6_TIMEOUT_MCLK;

/// Kind of pad plugged into a port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PadKind {
    ThreeButton,
    #[default]
    SixButton,
    /// Nothing plugged in: reads all ones.
    None,
}

#[derive(Clone, Debug, Default)]
pub struct Port {
    pub kind: PadKind,
    pub buttons: Buttons,
    /// Data register as last written by the CPU.
    data: u8,
    /// Control register (bit = 1: pin is an output driven by the CPU).
    ctrl: u8,
    /// TH transitions counted (0-7) for the 6-button protocol.
    phase: u8,
    /// mclk of the last TH change.
    last_th_change: u64,
}

impl Port {
    fn th(&self) -> bool {
        // TH as an input floats high (pull-up); as an output it is the
        // written bit.
        if self.ctrl & 0x40 != 0 {
            self.data & 0x40 != 0
        } else {
            true
        }
    }

    fn expire(&mut self, now: u64) {
        if self.phase != 0 && now.saturating_sub(self.last_th_change) > PAD6_TIMEOUT_MCLK {
            self.phase = 0;
        }
    }

    fn set_th(&mut self, old: bool, now: u64) {
        let new = self.th();
        if new != old {
            self.expire(now);
            self.phase = (self.phase + 1) & 7;
            self.last_th_change = now;
        }
    }

    pub fn write_data(&mut self, v: u8, now: u64) {
        let old = self.th();
        self.data = v;
        self.set_th(old, now);
    }

    pub fn write_ctrl(&mut self, v: u8, now: u64) {
        let old = self.th();
        self.ctrl = v;
        self.set_th(old, now);
    }

    pub fn ctrl(&self) -> u8 {
        self.ctrl
    }

    /// Pin levels the pad drives (bits 5-0, active low), given TH.
    fn pad_pins(&mut self, now: u64) -> u8 {
        let b = self.buttons;
        let on = |x: Buttons, bit: u8| if b.contains(x) { 0 } else { 1 << bit };
        let th = self.th();
        let normal_hi = on(Buttons::UP, 0)
            | on(Buttons::DOWN, 1)
            | on(Buttons::LEFT, 2)
            | on(Buttons::RIGHT, 3)
            | on(Buttons::B, 4)
            | on(Buttons::C, 5);
        let normal_lo =
            on(Buttons::UP, 0) | on(Buttons::DOWN, 1) | on(Buttons::A, 4) | on(Buttons::START, 5);
        match self.kind {
            PadKind::None => 0x3F,
            PadKind::ThreeButton => {
                if th {
                    normal_hi
                } else {
                    normal_lo
                }
            }
            PadKind::SixButton => {
                self.expire(now);
                match (self.phase, th) {
                    (5, false) => normal_lo & 0x30,
                    (6, true) => {
                        on(Buttons::Z, 0)
                            | on(Buttons::Y, 1)
                            | on(Buttons::X, 2)
                            | on(Buttons::MODE, 3)
                            | on(Buttons::B, 4)
                            | on(Buttons::C, 5)
                    }
                    (7, false) => (normal_lo & 0x30) | 0x0F,
                    (_, true) => normal_hi,
                    (_, false) => normal_lo,
                }
            }
        }
    }

    /// Read the data port: output pins read back what was written, input
    /// pins what the pad drives; bit 7 reads the written bit 7.
    pub fn read_data(&mut self, now: u64) -> u8 {
        let pins = self.pad_pins(now) | if self.th() { 0x40 } else { 0 };
        let out_mask = self.ctrl & 0x7F;
        (self.data & (out_mask | 0x80)) | (pins & !out_mask & 0x7F)
    }
}

/// Controller ports and version register.
#[derive(Clone, Debug)]
pub struct Io {
    pub ports: [Port; 2],
    /// Version register value (0xA10001).
    pub version: u8,
    /// Serial/extension registers (0xA1000D-0xA1001F) as written.
    regs: [u8; 16],
}

impl Io {
    /// Version register bits (public I/O documentation): bit 7 = overseas,
    /// bit 6 = PAL, bit 5 = 1 when no expansion unit, bits 3-0 = hardware
    /// version (0: model without TMSS).
    pub fn new(overseas: bool, pal: bool) -> Self {
        let version = (if overseas { 0x80 } else { 0 }) | (if pal { 0x40 } else { 0 }) | 0x20;
        Io {
            ports: [Port::default(), Port::default()],
            version,
            regs: [0; 16],
        }
    }

    /// Byte read at 0xA10000 + `reg` (reg = (addr >> 1) & 0xF).
    pub fn read(&mut self, reg: u32, now: u64) -> u8 {
        match reg {
            0 => self.version,
            1 => self.ports[0].read_data(now),
            2 => self.ports[1].read_data(now),
            3 => 0x7F, // extension port: nothing connected
            4 => self.ports[0].ctrl(),
            5 => self.ports[1].ctrl(),
            r => self.regs[r as usize],
        }
    }

    pub fn write(&mut self, reg: u32, v: u8, now: u64) {
        match reg {
            1 => self.ports[0].write_data(v, now),
            2 => self.ports[1].write_data(v, now),
            4 => self.ports[0].write_ctrl(v, now),
            5 => self.ports[1].write_ctrl(v, now),
            0 => {}
            r => self.regs[r as usize] = v,
        }
    }
}
