//! The emulator's PC sampler against the exact cycle profile on the
//! known-costs ROM: the sampled shares of the top functions agree with the
//! exact shares within the binomial error the sample count allows.

use std::path::{Path, PathBuf};

use retroprof_mdprof::romsyms::index_options;
use retroprof_mdprof::sampler::{self, Sampler};
use retroprof_megadrive::ExceptionKind;
use retroprof_megadrive::{Clock, Config, InstrCost, MdObserver, Rom, System};
use retroprof_samples::{histogram, symbolise, HistFormat, SymboliseOptions};
use retroprof_symbols::{FunctionIndex, Symbols};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Exact mclk per function: instruction costs to the function at the PC,
/// exception processing to the handler's function.
struct Exact<'a> {
    index: &'a FunctionIndex,
    mclk: Vec<u64>,
}

impl MdObserver for Exact<'_> {
    fn instruction(&mut self, pc: u32, cost: InstrCost, _clock: &Clock) {
        self.mclk[self.index.lookup(pc as u64) as usize] += cost.total as u64;
    }
    fn exception(&mut self, _k: ExceptionKind, _v: u8, handler: u32, mclk: u32, _c: &Clock) {
        self.mclk[self.index.lookup(handler as u64) as usize] += mclk as u64;
    }
}

#[test]
fn sampled_shares_agree_with_exact_cycles() {
    let dir = repo().join("testroms/out/knowncosts");
    let rom = Rom::load(&dir.join("rom.bin")).expect("testroms/out/knowncosts/rom.bin");
    let syms_path = dir.join("symbol.txt");
    let symbols = Symbols::load(&syms_path).unwrap();
    let index = symbols
        .build_index(&index_options(rom.data.len() as u64))
        .unwrap();
    let mut sys = System::new(&rom, Config::default());
    let hz = 2000;
    let mut pair = (
        Exact {
            index: &index,
            mclk: vec![0; index.functions().len()],
        },
        Sampler::new(hz, sys.mclk_hz()).unwrap(),
    );
    // Phases A, B, B2 and C: light frames, divisions, multiplications and
    // tile redraws (testroms/README.md).
    let frames = 1000;
    let start = sys.mclk();
    for _ in 0..frames {
        sys.run_frame(&mut pair).unwrap();
    }
    let elapsed = sys.mclk() - start;
    let (exact, sampler) = pair;
    let hist = sampler.finish();
    let n = hist.total();
    // One sample per 1/hz s of emulated time (the first may fall before).
    let expected = elapsed as f64 * hz as f64 / sys.mclk_hz() as f64;
    assert!(
        (n as f64 - expected).abs() <= 1.0,
        "{n} samples for {expected:.1} expected"
    );
    assert!(hist.external.is_empty(), "{:?}", hist.external);
    let total: u64 = exact.mclk.iter().sum();
    assert!(total > 0);

    // Both file formats read back to the same histogram.
    let map = retroprof_symbols::maps::load(&syms_path, None).unwrap();
    let mut petit = Vec::new();
    let info = sampler::write(&hist, HistFormat::Petit, None, &mut petit).unwrap();
    // Small ROM: every sample fits in the window, which starts at the
    // first sampled 256-byte block.
    let lowest = *hist.counts.keys().next().unwrap();
    assert_eq!(info.base, Some(lowest & !0xFF));
    assert_eq!(info.outside, 0);
    assert_eq!(petit.len(), 131_072);
    let from_petit = histogram::read_petit("petit", &petit, info.base.unwrap()).unwrap();
    let mut text = Vec::new();
    sampler::write(&hist, HistFormat::Text, None, &mut text).unwrap();
    let from_text =
        histogram::read_text("text", std::str::from_utf8(&text).unwrap(), None).unwrap();
    assert_eq!(from_petit.counts, hist.counts);
    assert_eq!(from_text.counts, hist.counts);

    let prof = symbolise(&from_petit, &map, &SymboliseOptions::default()).unwrap();
    assert_eq!(prof.total, n);

    // Exact ranking.
    let mut order: Vec<usize> = (0..exact.mclk.len())
        .filter(|&i| exact.mclk[i] > 0)
        .collect();
    order.sort_by(|&a, &b| exact.mclk[b].cmp(&exact.mclk[a]).then(a.cmp(&b)));
    let name = |i: usize| index.function(i as u32).name.clone();
    let mut checked = 0;
    for &i in order.iter().take(10) {
        let share = exact.mclk[i] as f64 / total as f64;
        if share < 0.005 {
            break;
        }
        let c = prof.compare_share(&name(i), share);
        eprintln!(
            "{:<24} exact {:6.3}%  sampled {:6.3}%  se {:.3}%  z {:+.2}",
            name(i),
            100.0 * c.exact,
            100.0 * c.sampled,
            100.0 * c.std_error,
            c.z
        );
        assert!(c.agrees(4.0), "{}: {c:?}", name(i));
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} functions above 0.5 %");
    // The same hottest function, and the sampled top 3 among the exact top 5.
    assert_eq!(prof.functions[0].name, name(order[0]));
    let exact_top: Vec<String> = order.iter().take(5).map(|&i| name(i)).collect();
    for f in prof.functions.iter().take(3) {
        assert!(
            exact_top.contains(&f.name),
            "{} not in {exact_top:?}",
            f.name
        );
    }
}

/// Counts the 68000 cycles the Z80 took from the 68000 (its banked reads),
/// to show the run below exercises them.
#[derive(Default)]
struct Stalls {
    instructions: u64,
    mclk: u64,
}

impl MdObserver for Stalls {
    fn instruction(&mut self, _pc: u32, cost: InstrCost, _clock: &Clock) {
        if cost.z80_stall > 0 {
            self.instructions += 1;
            self.mclk += cost.z80_stall as u64;
        }
    }
}

/// Every instant of emulated time is covered by an instruction or an
/// exception, also on instructions that paid a Z80 stall at their boundary
/// (the XGM driver's PCM reads of the 68000 bus, vnmd): the sampler
/// places an instruction's end after the whole boundary charge (refresh
/// and Z80 stall). Sampling every 10 68000 cycles, a stalled instruction
/// placed too early would leave a gap whose samples no instruction or
/// exception takes ("unreported time").
#[test]
fn sampler_covers_z80_stalls() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"))
        .join("roms/vnmd/rom.bin");
    let rom = Rom::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut sys = System::new(&rom, Config::default());
    let hz = sys.mclk_hz() / 70;
    let mut pair = (Stalls::default(), Sampler::new(hz, sys.mclk_hz()).unwrap());
    let start = sys.mclk();
    for _ in 0..240 {
        sys.run_frame(&mut pair).unwrap();
    }
    let elapsed = sys.mclk() - start;
    let (stalls, sampler) = pair;
    assert!(
        stalls.instructions > 1000,
        "only {} instructions paid a Z80 stall ({} mclk)",
        stalls.instructions,
        stalls.mclk
    );
    let hist = sampler.finish();
    assert!(hist.external.is_empty(), "{:?}", hist.external);
    let expected = elapsed as f64 * hz as f64 / sys.mclk_hz() as f64;
    let n = hist.total() as f64;
    assert!(
        (n - expected).abs() <= 1.0,
        "{n} samples for {expected:.1} expected"
    );
}
