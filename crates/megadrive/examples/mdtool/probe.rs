//! Debug aid: for frames A..=B write the PCs (with counts) executed in
//! [LO, HI) to OUT/pcs/F.txt and the 64 KiB of work RAM at each frame start
//! to OUT/ram/F.bin:
//! `mdtool probe ROM OUT A B LO HI [INPUT]`
use retroprof_megadrive::timing::{mclk_to_m68k_floor, MCLK_PER_LINE};
use retroprof_megadrive::{
    Clock, Config, InputScript, InstrCost, MdObserver, Rom, System, SystemView,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

struct P {
    lo: u32,
    hi: u32,
    pcs: BTreeMap<u32, u32>,
    ram: Vec<u8>,
    /// Z80 stall (68000 cycles) per scanline of the frame.
    z80: BTreeMap<u16, u32>,
}

impl MdObserver for P {
    fn at_pc(&mut self, pc: u32, v: &SystemView) {
        let r = &v.vdp.regs;
        println!(
            "F{} line {} +{} pc {pc:06x} regs {:02x?} sr {:04x} d0 {:08x} d1 {:08x} sp {:06x} ret {:06x}",
            v.frame(),
            v.line(),
            (v.mclk() - v.clock.frame_start_mclk()) % MCLK_PER_LINE,
            r,
            v.regs.sr,
            v.regs.d[0],
            v.regs.d[1],
            v.sp(),
            v.read_long(v.sp())
        );
    }
    fn frame_start(&mut self, _f: u64, v: &SystemView) {
        self.ram = v.wram.to_vec();
    }
    fn instruction(&mut self, pc: u32, c: InstrCost, k: &Clock) {
        if c.z80_stall > 0 {
            *self.z80.entry(k.line()).or_insert(0) += mclk_to_m68k_floor(c.z80_stall as u64) as u32;
        }
        if pc >= self.lo && pc < self.hi {
            *self.pcs.entry(pc).or_insert(0) += 1;
        }
    }
}

pub fn main(a: Vec<String>) {
    let rom = Rom::load(&PathBuf::from(&a[0])).unwrap();
    let out = PathBuf::from(&a[1]);
    let fa: u64 = a[2].parse().unwrap();
    let fb: u64 = a[3].parse().unwrap();
    let lo = u32::from_str_radix(&a[4], 16).unwrap();
    let hi = u32::from_str_radix(&a[5], 16).unwrap();
    let script = InputScript::parse(&a[6..]).unwrap();
    let mut sys = System::new(&rom, Config::default());
    // BREAK=pc,pc,... (hex): print VDP registers there.
    if let Ok(b) = std::env::var("BREAK") {
        let mut set = retroprof_megadrive::PcSet::new();
        for x in b.split(',') {
            set.insert(u32::from_str_radix(x, 16).unwrap());
        }
        sys.set_breakpoints(Some(set));
    }
    let mut p = P {
        lo,
        hi,
        pcs: BTreeMap::new(),
        ram: vec![],
        z80: BTreeMap::new(),
    };
    // SHOTS=f,f,...: write OUT/shot_F.png of those frames.
    let shots: Vec<u64> = std::env::var("SHOTS")
        .map(|v| v.split(',').map(|x| x.parse().unwrap()).collect())
        .unwrap_or_default();
    // END_FILL_AFTER=F: end a fill still busy at the end of frame F (what-if:
    // the reference emulator's quick 64 KB fill, see Vdp::end_fill_copy_busy).
    let end_fill_after: Option<u64> = std::env::var("END_FILL_AFTER")
        .ok()
        .and_then(|v| v.parse().ok());
    for f in 0..=fb {
        if shots.contains(&f) {
            sys.request_screenshot();
        }
        p.pcs.clear();
        p.z80.clear();
        sys.set_pad(0, script.buttons_at(f));
        sys.run_frame(&mut p).unwrap();
        if end_fill_after == Some(f) {
            let now = sys.mclk();
            sys.vdp_mut().end_fill_copy_busy(now);
        }
        if let Some((sf, img)) = sys.take_screenshot() {
            retroprof_megadrive::render::write_png(&img, &out.join(format!("shot_{sf}.png")))
                .unwrap();
        }
        if f >= fa {
            let s: String = p
                .pcs
                .iter()
                .map(|(pc, n)| format!("{pc:06x} {n}\n"))
                .collect();
            std::fs::write(out.join(format!("pcs/{f}.txt")), s).unwrap();
            std::fs::write(out.join(format!("ram/{f}.bin")), &p.ram).unwrap();
            let z: String = p.z80.iter().map(|(l, n)| format!("{l}:{n} ")).collect();
            println!("F{f} z80 stall by line: {z}");
        }
    }
}
