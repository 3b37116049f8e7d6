//! Mutation campaign (issue 21) on the ROM loader and the pad-script
//! parser, in `cargo test`: fixed seeds, a fixed number of cases, no
//! emulation (no System is built). Each case must not panic and must give
//! either a result that round-trips or an error naming the file / spec.

use std::path::Path;

use retroprof_megadrive::{InputScript, Rom};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn header_rom(size: usize) -> Vec<u8> {
    let mut r = vec![0u8; size];
    r[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    r[0x1F0] = b'U';
    r
}

#[test]
fn damaged_roms_give_named_errors() {
    let mut rng = Rng(0x5EED_0021);
    let (mut ok, mut refused) = (0, 0);
    for i in 0..2000 {
        let size = [
            0,
            1,
            0x1FF,
            0x200,
            0x201,
            0x400,
            0x10000,
            0x4000 * 3 + 0x200,
        ][rng.below(8) as usize];
        let mut r = if size >= 0x200 {
            header_rom(size)
        } else {
            vec![0u8; size]
        };
        for _ in 0..rng.below(12) {
            if r.is_empty() {
                break;
            }
            let at = if rng.below(2) == 0 {
                0x100 + rng.below(0x100) as usize // the header
            } else {
                rng.below(r.len() as u64) as usize
            };
            if at < r.len() {
                r[at] = rng.next() as u8;
            }
        }
        let name = format!("case{i}.bin");
        let res = std::panic::catch_unwind(|| Rom::from_bytes(Path::new(&name), r.clone()));
        match res.unwrap_or_else(|_| panic!("{name} panicked")) {
            Ok(rom) => {
                ok += 1;
                assert_eq!(rom.data.len(), r.len());
                // Round trip: the same bytes load to the same header.
                let again = Rom::from_bytes(Path::new(&name), rom.data.clone()).unwrap();
                assert_eq!(again.header.domestic_name, rom.header.domestic_name);
                assert_eq!(again.computed_checksum, rom.computed_checksum);
            }
            Err(e) => {
                refused += 1;
                assert!(e.to_string().contains(&name), "{e}");
            }
        }
    }
    assert!(ok > 100 && refused > 100, "ok {ok} refused {refused}");
}

#[test]
fn random_pad_scripts_parse_or_name_the_spec() {
    let alphabet = b"0123456789-:,+ UDLRABCSXYZMudlr\t*x";
    let mut rng = Rng(0x1A9u64 << 20 | 7);
    let mut ok = 0;
    for _ in 0..5000 {
        let n = rng.below(14) as usize;
        let mut spec: String = (0..n)
            .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize] as char)
            .collect();
        if rng.below(2) == 0 {
            // Well-formed-looking entries, with random parts.
            let parts = 1 + rng.below(3);
            let entries: Vec<String> = (0..parts)
                .map(|_| {
                    let a = rng.below(1000);
                    let range = match rng.below(3) {
                        0 => a.to_string(),
                        1 => format!("{a}-{}", a + rng.below(50)),
                        _ => format!("{a}-"),
                    };
                    let b: String = (0..rng.below(4))
                        .map(|_| b"UDLRABCSXYZM"[rng.below(12) as usize] as char)
                        .collect();
                    format!("{range}:{}", if b.is_empty() { "-".into() } else { b })
                })
                .collect();
            spec = entries.join(",");
            if rng.below(4) == 0 {
                let at = rng.below(spec.len() as u64 + 1) as usize;
                spec.insert(
                    at,
                    alphabet[rng.below(alphabet.len() as u64) as usize] as char,
                );
            }
        }
        let res = std::panic::catch_unwind(|| InputScript::parse_spec(&spec));
        match res.unwrap_or_else(|_| panic!("{spec:?} panicked")) {
            Ok(spans) => {
                ok += 1;
                // Round trip: rendered back, it parses to the same spans.
                let text: Vec<String> = spans
                    .iter()
                    .map(|s| {
                        let b = s.buttons.to_string();
                        let b = if b.is_empty() { "-".to_string() } else { b };
                        match s.to {
                            Some(t) if t == s.from => format!("{}:{b}", s.from),
                            Some(t) => format!("{}-{t}:{b}", s.from),
                            None => format!("{}-:{b}", s.from),
                        }
                    })
                    .collect();
                let again = InputScript::parse_spec(&text.join(",")).unwrap();
                assert_eq!(again, spans, "{spec:?} -> {text:?}");
                assert!(!spec.contains('+'), "{spec:?} accepted a sign");
            }
            Err(e) => {
                assert_eq!(e.spec, spec);
                assert!(e.to_string().contains(&format!("{spec:?}")), "{e}");
            }
        }
    }
    assert!(ok > 1000, "only {ok} scripts parsed");
}

/// Mutated pad scripts (issue 21, fixed seed): well-formed scripts with
/// edge frame numbers (0, u64::MAX, one past it), every button letter in
/// both cases, then characters inserted, removed or replaced. Each is
/// either refused with an error quoting the spec and saying what was
/// expected, or gives spans within the range rules (from <= to, buttons
/// only of the 12 UDLRABCSXYZM bits, letters of the spec all buttons) that
/// round-trip.
#[test]
fn mutated_pad_scripts_keep_the_range_rules() {
    let seeds = [
        "0:U",
        "60-600:R,200-210:C",
        "18446744073709551615:S",
        "0-18446744073709551615:udlrabcsxyzm",
        "5-:UDLRABCSXYZM",
        "10-10:-",
        "18446744073709551614-18446744073709551615:A",
    ];
    let alphabet: Vec<char> = "0123456789-:,+ UDLRABCSXYZMudlrabcsxyzmEQ\t\u{e9}"
        .chars()
        .collect();
    let mut rng = Rng(0xD0_0D1E);
    let (mut ok, mut refused) = (0, 0);
    for case in 0..6000 {
        let mut spec: Vec<char> = seeds[rng.below(seeds.len() as u64) as usize]
            .chars()
            .collect();
        for _ in 0..rng.below(3) {
            let at = rng.below(spec.len() as u64 + 1) as usize;
            let c = alphabet[rng.below(alphabet.len() as u64) as usize];
            match rng.below(3) {
                0 => spec.insert(at, c),
                1 if at < spec.len() => {
                    spec.remove(at);
                }
                _ if at < spec.len() => spec[at] = c,
                _ => {}
            }
        }
        let spec: String = spec.into_iter().collect();
        match InputScript::parse_spec(&spec) {
            Ok(spans) => {
                ok += 1;
                let entries: Vec<&str> = spec.split(',').collect();
                assert_eq!(entries.len(), spans.len(), "case {case}: {spec:?}");
                for (s, entry) in spans.iter().zip(&entries) {
                    assert!(
                        s.to.is_none_or(|t| t >= s.from),
                        "case {case}: {spec:?} {s:?}"
                    );
                    assert_eq!(s.buttons.0 & !0x0FFF, 0, "case {case}: {spec:?}");
                    let (_, letters) = entry.split_once(':').unwrap();
                    let letters = letters.trim();
                    assert!(
                        letters == "-"
                            || letters
                                .chars()
                                .all(|c| "UDLRABCSXYZM".contains(c.to_ascii_uppercase())),
                        "case {case}: {spec:?} accepted button letters {letters:?}"
                    );
                    assert!(
                        !entry.contains('+'),
                        "case {case}: {spec:?} accepted a sign"
                    );
                }
                let text: Vec<String> = spans
                    .iter()
                    .map(|s| {
                        let b = s.buttons.to_string();
                        let b = if b.is_empty() { "-".to_string() } else { b };
                        match s.to {
                            Some(t) => format!("{}-{t}:{b}", s.from),
                            None => format!("{}-:{b}", s.from),
                        }
                    })
                    .collect();
                let again = InputScript::parse_spec(&text.join(",")).unwrap();
                assert_eq!(again, spans, "case {case}: {spec:?} -> {text:?}");
            }
            Err(e) => {
                refused += 1;
                assert_eq!(e.spec, spec);
                let m = e.to_string();
                assert!(m.contains(&format!("{spec:?}")), "case {case}: {m}");
                assert!(
                    m.contains("expected FROM-TO:BUTTONS"),
                    "case {case}: the error says nothing of what was expected: {m}"
                );
                assert!(!e.reason.is_empty(), "case {case}: {m}");
            }
        }
    }
    assert!(ok > 1000 && refused > 1000, "ok {ok} refused {refused}");
}
