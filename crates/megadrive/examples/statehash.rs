//! Per-frame digest of the whole machine state with the no-op observer, for
//! checking that a speed change keeps the emulation byte-identical:
//! `cargo run --release -p retroprof-megadrive --example statehash -- ROM FRAMES [INPUT]`
//! Output: one line per frame: frame, mclk, instructions, 68000 registers,
//! Z80 clock/PC/stall/bank accesses, bus counters and FNV-1a hashes of work
//! RAM, VRAM, CRAM, VSRAM, VDP registers and Z80 RAM.
//! With `STATEHASH_Z80=1` in the environment each line also ends with a
//! hash of every Z80 register (incl. R, MEMPTR, Q, IFFs) and of the whole
//! YM2612 state (registers, flags, busy time, timers, write count).

use std::path::PathBuf;

use retroprof_megadrive::{Config, InputScript, Rom, System};

fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 2 {
        eprintln!("usage: statehash ROM FRAMES [INPUT]");
        std::process::exit(2);
    }
    let rom = Rom::load(&PathBuf::from(&a[0])).expect("rom");
    let frames: u64 = a[1].parse().expect("FRAMES");
    let script = InputScript::parse(&a[2..]).expect("input");
    let full = std::env::var_os("STATEHASH_Z80").is_some_and(|v| v == "1");
    let mut sys = System::new(&rom, Config::default());
    for f in 0..frames {
        sys.set_pad(0, script.buttons_at(f));
        if let Err(e) = sys.run_frame_unobserved() {
            println!("stopped: {e}");
            break;
        }
        let r = sys.registers();
        let z = sys.z80();
        let v = sys.vdp();
        print!(
            "{f} mclk={} instr={} regs={:?} z80clk={} z80pc={:04X} z80stall={} z80bank={} z80bad={} psg={} ctr={:?} wram={:016x} vram={:016x} cram={:016x} vsram={:016x} vregs={:016x} zram={:016x} st={:04X}",
            sys.mclk(),
            sys.instructions(),
            r,
            z.clock,
            z.cpu.pc,
            z.m68k_stall,
            z.bank_accesses,
            z.bad_bank_accesses,
            z.psg_writes,
            sys.counters(),
            fnv(sys.wram().iter().copied()),
            fnv(v.vram.iter().copied()),
            fnv(v.cram.iter().flat_map(|w| w.to_be_bytes())),
            fnv(v.vsram.iter().flat_map(|w| w.to_be_bytes())),
            fnv(v.regs.iter().copied()),
            fnv(z.ram.iter().copied()),
            sys.peek_vdp_status(),
        );
        if full {
            let extra = format!(
                "{:?} {:?} bank={} irq={} reset={} busreq={}",
                z.cpu, z.ym, z.bank, z.irq, z.reset, z.busreq
            );
            print!(" z80full={:016x}", fnv(extra.bytes()));
        }
        println!();
    }
}
