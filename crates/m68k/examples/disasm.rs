//! Disassemble a raw binary (a debugging aid for the disassembler).
//!
//! ```text
//! cargo run --release -p retroprof-m68k --example disasm -- FILE [START [END]] [--base ADDR]
//! ```
//!
//! FILE is loaded at address ADDR (default 0); START and END (hex, `0x`
//! optional; default: the whole file) give the address range. One line per
//! instruction: address, the instruction's words, the instruction.

use retroprof_m68k::disasm::disassemble_range;

fn parse_hex(s: &str) -> Result<u32, String> {
    let h = s.strip_prefix("0x").unwrap_or(s);
    u32::from_str_radix(h, 16).map_err(|e| format!("{s:?} is not a hex address: {e}"))
}

fn run() -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut base = 0u32;
    if let Some(i) = args.iter().position(|a| a == "--base") {
        let v = args.get(i + 1).ok_or("--base needs an address")?;
        base = parse_hex(v)?;
        args.drain(i..i + 2);
    }
    let usage = "usage: disasm FILE [START [END]] [--base ADDR]";
    let file = args.first().ok_or(usage)?;
    let code = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let file_end = u64::from(base) + code.len() as u64;
    let start = args
        .get(1)
        .map(|s| parse_hex(s))
        .transpose()?
        .unwrap_or(base);
    let end = match args.get(2) {
        Some(s) => u64::from(parse_hex(s)?).min(file_end),
        None => file_end,
    };
    if args.len() > 3 {
        return Err(usage.into());
    }
    let word = |a: u32| {
        let off = a.checked_sub(base)? as usize;
        Some(u16::from_be_bytes([*code.get(off)?, *code.get(off + 1)?]))
    };
    let end = u32::try_from(end).unwrap_or(u32::MAX);
    let mut out = String::new();
    for r in disassemble_range(start & !1, end, word) {
        match r {
            Ok(i) => {
                let words: Vec<String> = (0..i.len / 2)
                    .filter_map(|k| word(i.pc + 2 * k))
                    .map(|w| format!("{w:04x}"))
                    .collect();
                out.push_str(&format!("{:08x}  {:<24} {i}\n", i.pc, words.join(" ")));
            }
            Err(e) => out.push_str(&format!("{e}\n")),
        }
    }
    print!("{out}");
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("disasm: {e}");
        std::process::exit(2);
    }
}
