//! Acceptance: Nemesis' hardware-verified "VDP Port Access Test ROM"
//! (../shared/test-roms/vdpfifo/rom.bin, build 2011-12-19: 65 tests on pages 1-9 as its
//! documentation counts them, and 57 more fill/copy tests after them in this build; see
//! ../shared/test-roms/README.md).
//!
//! Pass/fail is decided the way the ROM decides it, from its own result
//! records in work RAM (reverse engineered from the ROM's code with
//! `m68k-linux-gnu-objdump -b binary -m m68k -D`):
//! - each test appends a record at 0xFF0000 onwards; the display routine
//!   (0x000D8A) walks them from the pointer it keeps in A6;
//! - a record is `rows.w, title_len.w, data_len.w, title[title_len],
//!   checked.w, block1[data_len]` and, when `checked` is non-zero,
//!   `block2[data_len]`; the word 0x8000 separates pages, 0xFFFF ends the
//!   list, 0x0000 marks where the tests run so far end;
//! - the routine at 0x000F9E/0x001092 compares the two blocks byte by byte
//!   (green when equal, red when not) and counts the test as passed when
//!   no byte differs (passed count at 0xFFFF10, failed at 0xFFFF12, copied
//!   to 0xFFFF08/0xFFFF0A for the "Results" line at each page end);
//! - a record without a second block has nothing to compare and counts as
//!   passed (the ROM does the same).
//!
//! The pad: at the first page's prompt (the loop at 0x000F46-0x000F99 that
//! waits for a button, through 0x0010E8), pressing A sets bit 0 of 0xFFFF02 and the ROM runs
//! every remaining page without stopping.
//!
//! The test fails on any failing test that is not in [`KNOWN_FAILURES`],
//! and on any test listed there that now passes (so the list stays true).

#[path = "golden/support.rs"]
mod support;

use retroprof_megadrive::{Buttons, Config, Rom, System};

/// Tests that fail today, each with the reason (test numbers as the ROM
/// counts them; an entry may cover a range).
const KNOWN_FAILURES: &[(u32, u32, &str)] = &[(
    16,
    16,
    "FIFO Wait States: words 34-35 and 38-39 of its results differ (hardware 0100 0000, \
     ours FFFF FFFF): the timing of the 68000's stalls on a full FIFO against the real access \
     slots is not modelled finely enough; not analysed further (Genesis Plus GX fails it too)",
)];

/// Frames to run at most (the whole ROM needs far fewer).
const MAX_FRAMES: u64 = 4000;
/// The prompt: 0x000F46-0x000F99 and the pad routines it calls
/// (0x0010E8 wait for a press, 0x001122 read the pad; nothing else calls
/// them).
const PROMPT_PCS: [std::ops::Range<u32>; 2] = [0x000F46..0x000F9A, 0x0010E8..0x00116A];

#[derive(Debug)]
struct TestResult {
    number: u32,
    title: String,
    passed: bool,
    /// The two compared blocks as hex words (for the failure log).
    detail: String,
}

fn word(ram: &[u8; 0x10000], a: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*ram.get(a)?, *ram.get(a + 1)?]))
}

/// Walk the ROM's result records: (records, whether the 0xFFFF end marker
/// was reached).
fn parse_records(ram: &[u8; 0x10000]) -> Result<(Vec<TestResult>, bool), String> {
    let mut p = 0usize;
    let mut out = Vec::new();
    loop {
        let rows = word(ram, p).ok_or_else(|| format!("record at 0xFF{p:04X} runs off RAM"))?;
        match rows {
            0 => return Ok((out, false)),
            0xFFFF => return Ok((out, true)),
            0x8000 => {
                p += 2;
                continue;
            }
            _ => {}
        }
        let bad = |what: &str| format!("record {} at 0xFF{p:04X}: {what}", out.len() + 1);
        let title_len = word(ram, p + 2).ok_or_else(|| bad("title length"))? as usize;
        let len = word(ram, p + 4).ok_or_else(|| bad("data length"))? as usize;
        let title_at = p + 6;
        let flag_at = title_at + title_len;
        let checked = word(ram, flag_at).ok_or_else(|| bad("check flag"))? != 0;
        let b1 = flag_at + 2;
        let b2 = b1 + len;
        let end = if checked { b2 + len } else { b2 };
        if end > ram.len() || title_len > 64 || len > 0x2000 {
            return Err(bad("lengths out of range"));
        }
        let title = String::from_utf8_lossy(&ram[title_at..flag_at])
            .trim()
            .to_string();
        let passed = !checked || ram[b1..b2] == ram[b2..end];
        let hex = |b: &[u8]| {
            b.chunks(2)
                .map(|w| w.iter().map(|x| format!("{x:02X}")).collect::<String>())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let detail = if checked {
            format!(
                "expected {}\n      got      {}",
                hex(&ram[b1..b2]),
                hex(&ram[b2..end])
            )
        } else {
            String::new()
        };
        out.push(TestResult {
            number: out.len() as u32 + 1,
            title,
            passed,
            detail,
        });
        p = end;
    }
}

#[test]
fn vdp_port_access_test_rom() {
    let shared = support::shared();
    let rom_path = support::must_exist(shared.join("test-roms/vdpfifo/rom.bin"));
    let rom = Rom::load(&rom_path).unwrap_or_else(|e| panic!("{}: {e}", rom_path.display()));
    let mut sys = System::new(&rom, Config::default());
    let mut results = None;
    let mut so_far = 0;
    // Press A for 6 frames once the first prompt shows (released before).
    let mut press_from: Option<u64> = None;
    for f in 0..MAX_FRAMES {
        let pc = sys.registers().pc;
        let at_prompt = PROMPT_PCS.iter().any(|r| r.contains(&pc));
        if at_prompt && press_from.is_none() {
            press_from = Some(f + 2);
        }
        let pressed = press_from.is_some_and(|s| f >= s && f < s + 6);
        sys.set_pad(0, if pressed { Buttons::A } else { Buttons::NONE });
        sys.run_frame(&mut ())
            .unwrap_or_else(|e| panic!("vdpfifo: frame {f}: {e}"));
        match parse_records(sys.wram()) {
            Ok((r, true)) => {
                results = Some((f, r));
                break;
            }
            Ok((r, false)) => so_far = r.len(),
            // A test still running has overwritten the list's end with
            // the start of its record: look again next frame.
            Err(_) => {}
        }
    }
    let (frame, results) = results.unwrap_or_else(|| {
        panic!(
            "vdpfifo: the ROM did not finish in {MAX_FRAMES} frames ({so_far} records, pc {:06X}, A pressed from frame {press_from:?})",
            sys.registers().pc
        )
    });
    // This build of the ROM runs 122 tests; the first 65 are the ones its
    // documentation counts (pages 1-9).
    assert!(
        results.len() >= 65,
        "vdpfifo: {} test records, expected at least 65",
        results.len()
    );
    let passed_all = results.iter().filter(|r| r.passed).count();
    let passed = results.iter().take(65).filter(|r| r.passed).count();
    // The ROM's own running tally (0xFFFF10 passed, 0xFFFF12 failed; the
    // display routine counts each record as it draws it): give the ROM
    // time to draw the last page.
    for _ in 0..120 {
        sys.run_frame(&mut ())
            .expect("vdpfifo: frame after the end");
    }
    let ram = sys.wram();
    let rom_passed = word(ram, 0xFF10).unwrap() as usize;
    let rom_failed = word(ram, 0xFF12).unwrap() as usize;
    for r in &results {
        println!(
            "vdpfifo {:2} {:<36} {}",
            r.number,
            r.title,
            if r.passed { "pass" } else { "FAIL" }
        );
        if !r.passed {
            println!("      {}", r.detail);
        }
    }
    let first50 = results.iter().take(50).filter(|r| r.passed).count();
    println!(
        "vdpfifo: {passed} passed of 65 ({first50} of the first 50; {passed_all} of all {}; finished at frame {frame})",
        results.len()
    );
    assert_eq!(
        (rom_passed, rom_failed),
        (passed_all, results.len() - passed_all),
        "vdpfifo: the ROM's own tally differs from the records"
    );
    let mut problems = Vec::new();
    for r in &results {
        let known = KNOWN_FAILURES
            .iter()
            .find(|k| (k.0..=k.1).contains(&r.number));
        match (r.passed, known) {
            (false, None) => problems.push(format!("test {} \"{}\" fails", r.number, r.title)),
            (true, Some(_)) => problems.push(format!(
                "test {} \"{}\" passes now: take it out of KNOWN_FAILURES",
                r.number, r.title
            )),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "vdpfifo:\n{}", problems.join("\n"));
}
