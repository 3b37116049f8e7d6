//! `retroprof run`: SRAM is saved next to the ROM only when asked
//! (`--sram`), loaded back on the next run, and never touched otherwise.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retroprof"))
        .args(args)
        .output()
        .expect("run retroprof")
}

fn tmp(name: &str) -> PathBuf {
    common::fresh_dir("run-cli", name)
}

/// A 64 KB ROM whose header declares 32 KB of odd-byte SRAM at 0x200001
/// and whose code reads SRAM byte 0, adds 1, writes it back, then spins.
fn sram_rom() -> Vec<u8> {
    let mut r = vec![0u8; 0x10000];
    r[0..4].copy_from_slice(&0x00FF_FE00u32.to_be_bytes()); // initial SSP
    r[4..8].copy_from_slice(&0x0000_0200u32.to_be_bytes()); // reset PC
    r[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    r[0x1B0..0x1B4].copy_from_slice(&[b'R', b'A', 0xF8, 0x20]); // backed up, odd bytes
    r[0x1B4..0x1B8].copy_from_slice(&0x0020_0001u32.to_be_bytes());
    r[0x1B8..0x1BC].copy_from_slice(&0x0020_FFFFu32.to_be_bytes());
    r[0x1F0] = b'U';
    let code: [u16; 8] = [
        0x1039, 0x0020, 0x0001, // move.b $200001,d0
        0x5200, // addq.b #1,d0
        0x13C0, 0x0020, 0x0001, // move.b d0,$200001
        0x60FE, // bra.s *
    ];
    for (i, w) in code.iter().enumerate() {
        r[0x200 + 2 * i..0x202 + 2 * i].copy_from_slice(&w.to_be_bytes());
    }
    r
}

#[test]
fn sram_is_saved_only_when_asked_and_loaded_back() {
    let d = tmp("sram");
    let rom = d.join("game.bin");
    std::fs::write(&rom, sram_rom()).unwrap();
    let srm = d.join("game.srm");
    let rom_s = rom.to_str().unwrap();

    // Without --sram: no file.
    let out = run(&["run", "--frames", "2", rom_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!srm.exists(), "SRAM written without --sram");

    // With --sram: saved. Fresh SRAM reads 0xFF (as a blank battery RAM is
    // modelled), so byte 0 is 0xFF + 1 = 0 (odd bytes: the file holds the
    // SRAM bytes in order).
    let out = run(&["run", "--frames", "2", "--sram", rom_s]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("sram: saved to"), "{text}");
    let first = std::fs::read(&srm).unwrap();
    assert!(!first.is_empty());
    assert_eq!(first[0], 0, "first byte after one run");
    assert!(first[1..].iter().all(|&b| b == 0xFF), "the rest untouched");

    // Next run loads it: the game increments what it finds.
    let out = run(&["run", "--frames", "2", "--sram", rom_s]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(&srm).unwrap()[0],
        1,
        "loaded back and incremented"
    );
    assert_eq!(std::fs::read(&srm).unwrap().len(), first.len());

    // The demo has no save file: a usage error (exit 2).
    let out = run(&["run", "--frames", "1", "--sram"]);
    assert_eq!(out.status.code(), Some(2));
}
