//! `retroprof run`: run a Mega Drive ROM headless, with scripted pads and
//! optional screenshots.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use retroprof_megadrive::render::{encode_png, Image};
use retroprof_megadrive::{Config, InputScript, Rom, System};
use retroprof_profile::write as pw;

use super::UsageError;
use crate::outln;

#[derive(clap::Args, Debug)]
#[command(
    about = "Run a Mega Drive ROM headless (scripted pads, screenshots) and report its speed",
    long_about = "Runs a Mega Drive ROM in retroprof's cycle-exact emulator without a window and \
                  prints the frames run, the emulated time, the wall time and the speed.\n\n\
                  Input scripts: FROM-TO:BUTTONS (inclusive), FROM:BUTTONS (one frame) or \
                  FROM-:BUTTONS (to the end); frames count from 0; buttons are letters of \
                  UDLRABCSXYZM (S = Start, M = Mode); several entries may be comma-separated \
                  and --input may be repeated. --input drives pad 1, --input2 pad 2.\n\n\
                  The summary can also be written as JSON (--json FILE, schema retroprof-run/1: \
                  see crates/cli/README.md); `-` is standard output, and the text summary then \
                  goes to standard error (-q: not at all). A --screenshot FILE may be `-` too \
                  (not on a terminal).\n\n\
                  Exit codes: 0 done, 2 bad input or arguments (not a ROM, bad script), 1 the \
                  game stopped the CPU (halt, error exception, runaway) or another error.",
    after_long_help = "Examples:\n  \
        retroprof run game.bin\n  \
        retroprof run game.bin -n 1200 -i 60-:S -i 120-400:R,200-210:C\n  \
        retroprof run game.bin --screenshot 300:title.png --screenshot 900:level.png\n  \
        retroprof run game.bin --region pal --sram\n  \
        retroprof run game.bin -q --json - | jq .speed_fps"
)]
pub struct RunArgs {
    /// The ROM image (.bin/.md, plain binary).
    pub rom: Option<PathBuf>,

    /// Frames to run.
    #[arg(short = 'n', long, default_value_t = 600, value_name = "N")]
    pub frames: u64,

    /// Pad 1 script: FROM-TO:BUTTONS, FROM:BUTTONS or FROM-:BUTTONS
    /// (buttons: letters of UDLRABCSXYZM).
    #[arg(short = 'i', long, value_name = "SPEC")]
    pub input: Vec<String>,

    /// Pad 2 script (same syntax).
    #[arg(long, value_name = "SPEC")]
    pub input2: Vec<String>,

    /// Save the picture of a frame: FRAME:FILE.png (repeatable).
    #[arg(long, value_name = "FRAME:FILE.png")]
    pub screenshot: Vec<String>,

    /// Force the console region instead of the ROM header's.
    #[arg(long, value_enum, value_name = "REGION")]
    pub region: Option<RegionArg>,

    /// Battery-backed SRAM declared in the ROM header: load it from ROM.srm
    /// next to the ROM when that file exists, and write it back there at the
    /// end (whole, via a temporary file) when the game wrote to it. Without
    /// this flag SRAM lives in memory only and no file is touched. A ROM
    /// whose own name ends in .srm saves to ROM.srm.srm instead (the SRAM
    /// file is never the ROM).
    #[arg(long)]
    pub sram: bool,

    /// Also write the summary as JSON (schema retroprof-run/1); `-` is
    /// standard output.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The schema name of `run --json`.
pub const RUN_SCHEMA: &str = "retroprof-run/1";

/// `run --json` (schema [`RUN_SCHEMA`], crates/cli/README.md), keys in
/// this order.
#[derive(serde::Serialize)]
struct RunSummary {
    schema: &'static str,
    rom: RomSummary,
    region: String,
    tv: &'static str,
    frames_requested: u64,
    frames_run: u64,
    emulated_s: f64,
    wall_s: f64,
    speed_fps: f64,
    realtime_factor: f64,
    sram: &'static str,
    sram_file: Option<String>,
    unmapped_reads: u64,
    unmapped_writes: u64,
    stopped: Option<String>,
}

#[derive(serde::Serialize)]
struct RomSummary {
    path: String,
    bytes: usize,
    checksum_ok: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionArg {
    Ntsc,
    Pal,
}

/// Parse `FRAME:FILE.png`.
pub fn parse_screenshot(spec: &str) -> Result<(u64, PathBuf), UsageError> {
    let (f, file) = spec.split_once(':').ok_or_else(|| {
        UsageError(format!(
            "bad --screenshot {spec:?}: expected FRAME:FILE.png"
        ))
    })?;
    // Digits only: u64's parser also takes a sign ("+5").
    let t = f.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UsageError(format!(
            "bad --screenshot {spec:?}: {f:?} is not a frame number (digits 0-9; expected FRAME:FILE.png)"
        )));
    }
    let frame = t.parse::<u64>().map_err(|_| {
        UsageError(format!(
            "bad --screenshot {spec:?}: {f:?} is not a frame number (at most {})",
            u64::MAX
        ))
    })?;
    if file.is_empty() {
        return Err(UsageError(format!(
            "bad --screenshot {spec:?}: no file name (expected FRAME:FILE.png)"
        )));
    }
    Ok((frame, PathBuf::from(file)))
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let rom_path: &Path = match args.rom.as_deref() {
        Some(p) => p,
        None => Path::new(retroprof_mdprof::demo::LABEL),
    };
    let pad1 = InputScript::parse(&args.input).map_err(|e| UsageError(e.to_string()))?;
    let pad2 = InputScript::parse(&args.input2).map_err(|e| UsageError(e.to_string()))?;
    let mut shots = args
        .screenshot
        .iter()
        .map(|s| parse_screenshot(s))
        .collect::<Result<Vec<_>, _>>()?;
    shots.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    for (frame, _) in &shots {
        if *frame >= args.frames {
            return Err(UsageError(format!(
                "--screenshot frame {frame} is not run (--frames {})",
                args.frames
            ))
            .into());
        }
    }
    if args.sram && args.rom.is_none() {
        return Err(
            UsageError("--sram needs a ROM (the built-in demo has no save file)".into()).into(),
        );
    }
    let sram_file = args.sram.then(|| sram_path(rom_path));
    // Nothing the user gave is overwritten, and every output can be written.
    let mut plan = pw::OutputPlan::new();
    if args.rom.is_some() {
        plan.input("the ROM", rom_path);
    }
    // The same FRAME:FILE given twice is one output; one file for two
    // frames is two outputs on one path (refused).
    shots.dedup();
    for (_, path) in &shots {
        plan.output("--screenshot", path);
    }
    if let Some(p) = &sram_file {
        plan.output("the SRAM file (--sram)", p);
    }
    if let Some(p) = &args.json {
        plan.output("--json", p);
    }
    for (_, path) in &shots {
        super::refuse_binary_on_terminal("--screenshot", path, "a PNG picture")?;
    }
    super::check_outputs(&plan)?;
    if args.rom.is_none() {
        outln!("No ROM given: running the built-in demo (the known-costs test ROM, testroms/out/knowncosts).");
    }
    let rom = match args.rom {
        Some(_) => load_rom(rom_path)?,
        None => retroprof_mdprof::demo::load().0,
    };
    let config = Config {
        region: args
            .region
            .map(|r| rom.region_with_standard(r == RegionArg::Pal)),
        ..Config::default()
    };
    let mut sys = System::new(&rom, config);
    if let Some(p) = &sram_file {
        if !sys.sram().is_empty() {
            if let Some(data) = read_sram(p, sys.sram().len())? {
                sys.load_sram(&data);
            }
        }
    }
    let start = Instant::now();
    let mut frames_run = 0u64;
    let mut emulated_mclk = 0u64;
    let mut stop_error = None;
    let mut next_shot = 0usize;
    for frame in 0..args.frames {
        sys.set_pad(0, pad1.buttons_at(frame));
        sys.set_pad(1, pad2.buttons_at(frame));
        let want_shot = shots.get(next_shot).is_some_and(|s| s.0 == frame);
        if want_shot {
            sys.request_screenshot();
        }
        match sys.run_frame_unobserved() {
            Ok(info) => {
                frames_run += 1;
                emulated_mclk += info.end_mclk - info.start_mclk;
            }
            Err(e) => {
                stop_error = Some(e);
                break;
            }
        }
        if want_shot {
            if let Some((_, img)) = sys.take_screenshot() {
                while let Some((f, path)) = shots.get(next_shot) {
                    if *f != frame {
                        break;
                    }
                    write_screenshot(&img, path)?;
                    next_shot += 1;
                }
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let sram_saved = match &sram_file {
        Some(path) if !sys.sram().is_empty() && sys.sram_dirty() => {
            pw::atomic(path, true, |w| {
                w.write_all(sys.sram())
                    .map_err(|source| retroprof_profile::Error::Io {
                        path: pw::STREAM_PATH.into(),
                        source,
                    })
            })
            .with_context(|| format!("writing SRAM to {}", path.display()))?;
            sys.mark_sram_saved();
            Some(true)
        }
        Some(_) => Some(false),
        None => None,
    };
    let emulated = emulated_mclk as f64 / sys.mclk_hz() as f64;
    outln!(
        "rom: {} ({} bytes, {:?}{})",
        rom_path.display(),
        rom.data.len(),
        sys.region(),
        if rom.checksum_ok() {
            ""
        } else {
            ", header checksum does not match"
        }
    );
    outln!(
        "frames: {frames_run}  emulated: {emulated:.3} s  wall: {wall:.3} s  speed: {:.1} fps ({:.1}x real time)",
        frames_run as f64 / wall.max(1e-9),
        emulated / wall.max(1e-9)
    );
    let sram_shown = sram_file.as_deref().unwrap_or(Path::new("")).display();
    match sram_saved {
        Some(true) => outln!("sram: saved to {sram_shown}"),
        Some(false) if rom.header.sram.is_none() => {
            outln!("sram: the ROM header declares no SRAM; nothing saved")
        }
        Some(false) => outln!("sram: the game did not write SRAM; {sram_shown} left as it was"),
        None => {}
    }
    let c = sys.counters();
    if c.unmapped_reads + c.unmapped_writes > 0 {
        outln!(
            "unmapped accesses: {} reads, {} writes",
            c.unmapped_reads,
            c.unmapped_writes
        );
    }
    if let Some(path) = &args.json {
        let sram = match sram_saved {
            Some(true) => "saved",
            Some(false) if rom.header.sram.is_none() => "none in header",
            Some(false) => "not written",
            None => "off",
        };
        let v = RunSummary {
            schema: RUN_SCHEMA,
            rom: RomSummary {
                path: rom_path.display().to_string(),
                bytes: rom.data.len(),
                checksum_ok: rom.checksum_ok(),
            },
            region: format!("{:?}", sys.region()),
            tv: if sys.region().is_pal() { "PAL" } else { "NTSC" },
            frames_requested: args.frames,
            frames_run,
            emulated_s: emulated,
            wall_s: wall,
            speed_fps: frames_run as f64 / wall.max(1e-9),
            realtime_factor: emulated / wall.max(1e-9),
            sram,
            sram_file: sram_file.as_ref().map(|p| p.display().to_string()),
            unmapped_reads: c.unmapped_reads,
            unmapped_writes: c.unmapped_writes,
            stopped: stop_error.as_ref().map(|e| e.to_string()),
        };
        pw::atomic(path, true, |w| {
            serde_json::to_writer_pretty(&mut *w, &v)
                .map_err(|e| retroprof_profile::Error::Invalid(e.to_string()))?;
            w.write_all(b"\n")
                .map_err(|source| retroprof_profile::Error::Io {
                    path: pw::STREAM_PATH.into(),
                    source,
                })
        })
        .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(e) = stop_error {
        return Err(anyhow::Error::new(e).context(format!(
            "{}: emulation stopped after {frames_run} frames",
            rom_path.display()
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// The SRAM save file of a ROM: the ROM path with extension `.srm`, or,
/// when the ROM's own name ends in `.srm`, `.srm` appended (`game.srm` ->
/// `game.srm.srm`) so that it can never be the ROM.
pub fn sram_path(rom: &Path) -> PathBuf {
    let is_srm = rom
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("srm"));
    if is_srm {
        let mut s = rom.as_os_str().to_owned();
        s.push(".srm");
        PathBuf::from(s)
    } else {
        rom.with_extension("srm")
    }
}

/// Read a save file for an SRAM of `size` bytes (bounded: at most 1 MiB);
/// `None` when there is none yet.
fn read_sram(path: &Path, size: usize) -> anyhow::Result<Option<Vec<u8>>> {
    if !path.exists() {
        return Ok(None);
    }
    // Larger saves (other emulators pad them) are read up to 1 MiB, and
    // only the first `size` bytes are used.
    let limit = (size as u64).max(1 << 20);
    let data = retroprof_samples::retroprof_symbols::input::read_limited(path, limit)
        .map_err(|e| UsageError(format!("cannot read the SRAM file {}: {e}", path.display())))?;
    Ok(Some(data))
}

/// Write a screenshot whole (see [`pw::atomic`]: device nodes, FIFOs and
/// links are safe).
fn write_screenshot(img: &Image, path: &Path) -> anyhow::Result<()> {
    let bytes =
        encode_png(img).with_context(|| format!("encoding screenshot {}", path.display()))?;
    pw::atomic(path, true, |w| {
        w.write_all(&bytes)
            .map_err(|source| retroprof_profile::Error::Io {
                path: pw::STREAM_PATH.into(),
                source,
            })
    })
    .with_context(|| format!("writing screenshot {}", path.display()))
}

/// Load a ROM, turning its errors into usage errors (exit code 2).
pub fn load_rom(path: &Path) -> anyhow::Result<Rom> {
    Rom::load(path).map_err(|e| UsageError(e.to_string()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screenshot_specs() {
        assert_eq!(
            parse_screenshot("120:a.png").unwrap(),
            (120, PathBuf::from("a.png"))
        );
        assert!(parse_screenshot("x:a.png").is_err());
        assert!(parse_screenshot("120").is_err());
        assert!(parse_screenshot("120:").is_err());
        // Issue 21: a sign was accepted by u64's parser.
        for bad in ["+5:a.png", "-5:a.png", "0x10:a.png", "1 2:a.png", ":a.png"] {
            let e = parse_screenshot(bad).unwrap_err().to_string();
            assert!(e.contains("is not a frame number"), "{bad}: {e}");
        }
        let e = parse_screenshot("18446744073709551616:a.png")
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 18446744073709551615"), "{e}");
    }

    /// Issue 21 campaign (fixed seed): random and mutated `--screenshot`
    /// specs are either refused with an error quoting the spec and saying
    /// what was expected, or give a frame and a non-empty file that
    /// round-trip (`FRAME:FILE` rendered back parses to the same).
    #[test]
    fn random_screenshot_specs_parse_or_say_what_is_expected() {
        let seeds = [
            "120:a.png",
            "0:shots/f0.png",
            "18446744073709551615:x.png",
            "5:dir:with:colons.png",
            " 7 :b.png",
            "60:\u{e9}t\u{e9}.png",
        ];
        let alphabet: Vec<char> = "0123456789:+-x. /\t\u{e9}ap".chars().collect();
        let mut rng = retroprof_testkit::SplitMix64::new(0x5C4EE4u64);
        let (mut ok, mut refused) = (0, 0);
        for case in 0..6000 {
            let spec = rng.mutated_spec(&seeds, &alphabet, 12);
            match parse_screenshot(&spec) {
                Ok((frame, file)) => {
                    ok += 1;
                    assert!(!file.as_os_str().is_empty(), "case {case}: {spec:?}");
                    let (f, _) = spec.split_once(':').unwrap();
                    assert!(
                        f.trim().bytes().all(|b| b.is_ascii_digit()),
                        "case {case}: {spec:?} accepted a frame that is not digits"
                    );
                    let again = format!("{frame}:{}", file.to_str().unwrap());
                    assert_eq!(
                        parse_screenshot(&again).unwrap(),
                        (frame, file),
                        "case {case}: {spec:?} -> {again:?}"
                    );
                }
                Err(e) => {
                    refused += 1;
                    let m = e.to_string();
                    assert!(
                        m.starts_with(&format!("bad --screenshot {spec:?}: ")),
                        "case {case}: {m}"
                    );
                    assert!(
                        ["expected FRAME:FILE.png", "at most", "no file name"]
                            .iter()
                            .any(|k| m.contains(k)),
                        "case {case}: the error says nothing of what was expected: {m}"
                    );
                }
            }
        }
        assert!(ok > 1000 && refused > 1000, "ok {ok} refused {refused}");
    }
}
