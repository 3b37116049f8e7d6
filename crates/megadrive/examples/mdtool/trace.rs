//! Debug aid: print each instruction's cost inside [LO, HI) for frame F:
//! `mdtool trace ROM F LO HI`
use retroprof_megadrive::timing::mclk_to_m68k_floor;
use retroprof_megadrive::{Clock, Config, InputScript, InstrCost, MdObserver, Rom, System};
use std::path::PathBuf;
struct T {
    on: bool,
    lo: u32,
    hi: u32,
}
impl MdObserver for T {
    fn instruction(&mut self, pc: u32, c: InstrCost, k: &Clock) {
        if self.on && pc >= self.lo && pc < self.hi {
            println!(
                "{pc:06X} {} (freeze {} fifo {} refresh {}) line {}",
                mclk_to_m68k_floor(c.total as u64),
                mclk_to_m68k_floor(c.dma_freeze as u64),
                mclk_to_m68k_floor(c.fifo_wait as u64),
                mclk_to_m68k_floor(c.refresh as u64),
                k.line()
            );
        }
    }
}
pub fn main(a: Vec<String>) {
    let rom = Rom::load(&PathBuf::from(&a[0])).unwrap();
    let f: u64 = a[1].parse().unwrap();
    let lo = u32::from_str_radix(&a[2], 16).unwrap();
    let hi = u32::from_str_radix(&a[3], 16).unwrap();
    let mut sys = System::new(&rom, Config::default());
    let script = InputScript::parse(&a[4..]).unwrap();
    let mut t = T { on: false, lo, hi };
    for i in 0..=f + 200 {
        t.on = i >= f;
        sys.set_pad(0, script.buttons_at(i));
        sys.run_frame(&mut t).unwrap();
    }
}
