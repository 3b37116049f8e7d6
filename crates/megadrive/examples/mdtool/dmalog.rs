//! Debug aid: print DMA events and VDP register 1 writes of a frame range:
//! `mdtool dmalog ROM FROM TO [INPUT]`.
use retroprof_megadrive::timing::MCLK_PER_LINE;
use retroprof_megadrive::{Clock, Config, DmaEvent, InputScript, MdObserver, Rom, System, VdpPort};
use std::path::PathBuf;
struct L {
    on: bool,
}
impl MdObserver for L {
    fn dma(&mut self, e: &DmaEvent) {
        if self.on {
            println!(
                "frame {} dma {:?} bytes {} src {:06X} line {} start {} end {} (+{} lines) vb {} act {} last {:?}",
                e.frame, e.kind, e.bytes, e.source, e.span.start_line, e.span.start, e.span.end,
                (e.span.end - e.span.start) as f64 / MCLK_PER_LINE as f64, e.span.bytes_vblank, e.span.bytes_active, e.span.last_active_line
            );
        }
    }
    fn vdp_write(&mut self, port: VdpPort, v: u16, c: &Clock) {
        if self.on && port == VdpPort::Control && v & 0xFF00 == 0x8100 {
            println!(
                "frame {} line {} reg1 = {:02X}",
                c.frame(),
                c.line(),
                v & 0xFF
            );
        }
    }
}
pub fn main(a: Vec<String>) {
    let rom = Rom::load(&PathBuf::from(&a[0])).unwrap();
    let from: u64 = a[1].parse().unwrap();
    let to: u64 = a[2].parse().unwrap();
    let script = InputScript::parse(&a[3..]).unwrap();
    let mut sys = System::new(&rom, Config::default());
    let mut l = L { on: false };
    for f in 0..=to {
        sys.set_pad(0, script.buttons_at(f));
        l.on = f >= from;
        sys.run_frame(&mut l).unwrap();
    }
}
