//! Write a small hand-built profile in every format, for checking the
//! outputs with their viewers:
//!
//! ```text
//! cargo run -p retroprof-profile --example write_all -- OUT_DIR
//! go tool pprof -top OUT_DIR/demo.pb.gz
//! ```
//!
//! With `--frames N` it instead builds a large synthetic profile (N samples
//! over a deep call tree) and prints how long each writer took.

use std::path::PathBuf;
use std::time::Instant;

use retroprof_profile::write::{
    self,
    trace::{self, TraceWriter},
};
use retroprof_profile::{Frame, Sample, StackProfile, ValueType};

fn demo() -> StackProfile {
    let mut p = StackProfile {
        name: "demo.bin".into(),
        value_types: vec![
            ValueType {
                kind: "cycles".into(),
                unit: "cycles".into(),
            },
            ValueType {
                kind: "samples".into(),
                unit: "count".into(),
            },
        ],
        ..Default::default()
    };
    let f = |name: &str, addr: u64, line: Option<u32>, inlined: bool| Frame {
        name: name.into(),
        addr: Some(addr),
        file: line.map(|_| "src/main.c".to_string()),
        line,
        module: None,
        inlined,
    };
    let main = p.frame_index(f("main", 0x61e, Some(40), false));
    let game = p.frame_index(f("game_loop", 0x700, Some(88), false));
    let phys = p.frame_index(f("update_physics", 0x700, Some(12), true));
    let wait = p.frame_index(f("VDP_waitVBlank", 0xc758, None, false));
    let draw = p.frame_index(f("draw", 0x900, Some(5), false));
    let dma = p.frame_index(f("DMA_queueDma", 0xa000, None, false));
    p.samples = vec![
        Sample {
            stack: vec![main, game, phys],
            values: vec![6000, 6],
        },
        Sample {
            stack: vec![main, game, wait],
            values: vec![60000, 60],
        },
        Sample {
            stack: vec![main, game, draw, dma],
            values: vec![12000, 12],
        },
        Sample {
            stack: vec![main, game, draw],
            values: vec![3000, 3],
        },
    ];
    p
}

/// A synthetic profile: `n` samples over a tree of 4,000 functions, depth
/// up to 24 (deterministic pseudo-random).
fn synthetic(n: usize) -> StackProfile {
    let mut p = StackProfile {
        name: "synthetic".into(),
        value_types: vec![ValueType {
            kind: "cycles".into(),
            unit: "cycles".into(),
        }],
        ..Default::default()
    };
    for i in 0..4000u64 {
        p.frames.push(Frame {
            name: format!("function_{i:04}"),
            addr: Some(0x200 + i * 0x40),
            file: Some(format!("src/file_{}.c", i % 50)),
            line: Some((i % 700) as u32 + 1),
            module: None,
            inlined: i % 17 == 0,
        });
    }
    let mut x: u64 = 0x1234_5678;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..n {
        let depth = 2 + (rnd() % 23) as usize;
        let mut stack = Vec::with_capacity(depth);
        let mut f = 0u64;
        for _ in 0..depth {
            f = (f * 7 + rnd() % 13) % 4000;
            stack.push(f as u32);
        }
        p.samples.push(Sample {
            stack,
            values: vec![1 + (rnd() % 1000) as i64],
        });
    }
    p
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (p, dir, timed) = match args.as_slice() {
        [dir] => (demo(), PathBuf::from(dir), false),
        [flag, n, dir] if flag == "--frames" => (synthetic(n.parse()?), PathBuf::from(dir), true),
        _ => return Err("usage: write_all [--frames N] OUT_DIR".into()),
    };
    std::fs::create_dir_all(&dir)?;
    let stem = if timed { "synthetic" } else { "demo" };
    let t = Instant::now();
    write::atomic(&dir.join(format!("{stem}.folded")), true, |w| {
        write::folded(&p, 0, w)
    })?;
    let t_folded = t.elapsed();
    let t = Instant::now();
    write::atomic(&dir.join(format!("{stem}.pb.gz")), true, |w| {
        write::pprof(&p, w)
    })?;
    let t_pprof = t.elapsed();
    let t = Instant::now();
    write::atomic(&dir.join(format!("{stem}.speedscope.json")), true, |w| {
        write::speedscope(&p, w)
    })?;
    let t_speedscope = t.elapsed();
    let t = Instant::now();
    write::atomic(&dir.join(format!("{stem}.svg")), true, |w| {
        write::flamegraph_svg(&p, 0, "retroprof demo", w)
    })?;
    let t_svg = t.elapsed();
    let t = Instant::now();
    write::atomic(&dir.join(format!("{stem}.trace.json")), true, |w| {
        let mut tw = TraceWriter::new(w)?;
        tw.process_name(1, "Mega Drive")?;
        tw.thread_name(1, 1, "Main thread")?;
        // Cycles laid end to end, on the exact 125 ns grid at 7.67 MHz.
        let mut cycles = 0u64;
        for (i, s) in p
            .samples
            .iter()
            .enumerate()
            .take(if timed { 1_000_000 } else { 100 })
        {
            let name = &p.frames[*s.stack.last().unwrap() as usize].name;
            let start = trace::to_grid_ns(cycles, 7_670_000);
            cycles += s.values[0].max(0) as u64;
            let end = trace::to_grid_ns(cycles, 7_670_000);
            tw.complete(
                name,
                "cpu",
                1,
                1,
                start,
                end,
                &[("sample", (i as u64).into())],
            )?;
        }
        tw.finish()?;
        Ok(())
    })?;
    let t_trace = t.elapsed();
    if timed {
        // The same writers into a sink: CPU time without the disk.
        let t = Instant::now();
        write::folded(&p, 0, std::io::sink())?;
        let s_folded = t.elapsed();
        let t = Instant::now();
        write::pprof(&p, std::io::sink())?;
        let s_pprof = t.elapsed();
        let t = Instant::now();
        write::flamegraph_svg(&p, 0, "sink", std::io::sink())?;
        let s_svg = t.elapsed();
        println!("in memory: folded {s_folded:?}, pprof {s_pprof:?}, svg {s_svg:?}");
        println!(
            "{} samples: folded {:?}, pprof {:?}, speedscope {:?}, svg {:?}, trace {:?}",
            p.samples.len(),
            t_folded,
            t_pprof,
            t_speedscope,
            t_svg,
            t_trace
        );
    }
    println!(
        "wrote {}/{stem}.{{folded,pb.gz,speedscope.json,svg,trace.json}}",
        dir.display()
    );
    Ok(())
}
