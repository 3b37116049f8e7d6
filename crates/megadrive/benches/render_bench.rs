//! Renderer speed: full frames of a busy synthetic scene (both planes
//! filled, line scroll, 2-cell vertical scroll, window, 80 sprites).
//!
//! `cargo bench -p retroprof-megadrive --bench render_bench [-- FRAMES]`

use std::time::Instant;

use retroprof_megadrive::render::{Renderer, VdpSnapshot};

fn main() {
    let frames: u32 = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut vram = Box::new([0u8; 0x10000]);
    let mut cram = [0u16; 64];
    let mut vsram = [0u16; 40];
    let mut regs = [0u8; 24];
    regs[0] = 0x04;
    regs[1] = 0x44;
    regs[2] = 0x30; // A at 0xC000
    regs[3] = 0x2C; // window at 0xB000
    regs[4] = 0x07; // B at 0xE000
    regs[5] = 0x78; // sprites at 0xF000
    regs[11] = 0x07;
    regs[12] = 0x81;
    regs[13] = 0x3F; // H scroll at 0xFC00
    regs[16] = 0x01;
    regs[17] = 0x03;
    regs[18] = 0x94;
    let mut seed = 0x2545_F491u32;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    // Patterns 0..0x57F (below the name tables).
    for b in vram[..0xB000].iter_mut() {
        *b = rnd() as u8;
    }
    let w16 = |vram: &mut [u8; 0x10000], a: usize, v: u16| {
        vram[a] = (v >> 8) as u8;
        vram[a + 1] = v as u8;
    };
    for i in 0..(64 * 32) {
        w16(
            &mut vram,
            0xC000 + i * 2,
            ((rnd() % 0x580) as u16) | ((rnd() & 0xF800) as u16),
        );
        w16(
            &mut vram,
            0xE000 + i * 2,
            ((rnd() % 0x580) as u16) | ((rnd() & 0xF800) as u16),
        );
        w16(&mut vram, 0xB000 + i * 2, (rnd() as u16) % 0x580);
    }
    for n in 0..80usize {
        let a = 0xF000 + n * 8;
        w16(&mut vram, a, 128 + (rnd() % 224) as u16);
        vram[a + 2] = (rnd() & 0x0F) as u8;
        vram[a + 3] = if n == 79 { 0 } else { n as u8 + 1 };
        w16(
            &mut vram,
            a + 4,
            ((rnd() % 0x580) as u16) | ((rnd() & 0xF800) as u16),
        );
        w16(&mut vram, a + 6, 96 + (rnd() % 352) as u16);
    }
    for line in 0..224 {
        w16(&mut vram, 0xFC00 + line * 4, (line * 3) as u16 & 0x3FF);
        w16(
            &mut vram,
            0xFC00 + line * 4 + 2,
            (1024 - line) as u16 & 0x3FF,
        );
    }
    for c in cram.iter_mut() {
        *c = rnd() as u16 & 0x0EEE;
    }
    for s in vsram.iter_mut() {
        *s = rnd() as u16 & 0x3FF;
    }
    let mut r = Renderer::new();
    let mut line = [0u32; 320];
    let mut check = 0u64;
    for sh in [false, true] {
        if sh {
            regs[12] |= 0x08;
        }
        let v = VdpSnapshot {
            vram: &vram,
            cram: &cram,
            vsram: &vsram,
            regs: &regs,
        };
        let start = Instant::now();
        let cpu0 = cpu_ns();
        for _ in 0..frames {
            for y in 0..224u16 {
                r.render_line(&v, y, &mut line);
                check = check.wrapping_add(line[y as usize % 320] as u64);
            }
        }
        let el = start.elapsed();
        let cpu = cpu_ns()
            .zip(cpu0)
            .map(|(b, a)| (b - a) as f64 / 1e3 / frames as f64);
        println!(
            "H40 320x224{}: {frames} frames in {:.3} s wall: {:.1} us/frame wall, {} ({:.0} frames/s wall)",
            if sh { " shadow/highlight" } else { "" },
            el.as_secs_f64(),
            el.as_secs_f64() * 1e6 / frames as f64,
            cpu.map_or("CPU time unavailable".to_string(), |c| format!("{c:.1} us/frame CPU")),
            frames as f64 / el.as_secs_f64()
        );
    }
    println!("(checksum {check:x})");
}

/// This thread's CPU time in ns (Linux /proc; None elsewhere). The machines
/// are shared, so CPU time is steadier than wall time.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}
