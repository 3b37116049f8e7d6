//! Bad input gives clear errors or warnings, never a panic.

use retroprof_samples::histogram::{self, HistError, Histogram, ReadOptions};
use retroprof_samples::{symbolise, SymboliseError, SymboliseOptions};
use retroprof_symbols::maps::{self, MapError, MapFormat, TextEncoding};

#[test]
fn histogram_of_the_wrong_size() {
    // One counter short of a Petit dump, binary: not text either.
    let bytes = vec![0u8; histogram::PETIT_SIZE - 2];
    let err = histogram::read("n2kc.log", &bytes, None, &ReadOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("n2kc.log: 131070 bytes"), "{msg}");
    assert!(msg.contains("131072"), "{msg}");
    // Forced Petit: the same, said plainly.
    let err = histogram::read_petit("n2kc.log", &bytes, 0).unwrap_err();
    assert!(err.to_string().contains("exactly 131072 bytes"), "{err}");
    // A .PRF whose header disagrees with its length.
    let mut prf = vec![0u8; 18 + 10];
    prf[2] = 7; // bucket_num = 7 -> 32 bytes expected
    prf[4] = 1;
    let err = histogram::read_prf("X.PRF", &prf, None).unwrap_err();
    assert!(err.to_string().contains("should be 32 bytes"), "{err}");
    // Empty and tiny files.
    assert!(histogram::read_prf("X.PRF", &[1, 2, 3], None).is_err());
    let h = histogram::read("empty.txt", b"", None, &ReadOptions::default()).unwrap();
    assert_eq!(h.total(), 0);
}

#[test]
fn text_histogram_errors_name_the_line() {
    let text = "# ok\n0x100 5\n0000:0200 7\n0x300 lots\n";
    let err = histogram::read_text("h.txt", text, None).unwrap_err();
    assert!(matches!(err, HistError::Syntax { line: 4, .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "h.txt:4: count `lots` is not a decimal number"
    );
    let err = histogram::read_text("h.txt", "zz:10 1\n", None).unwrap_err();
    assert!(err.to_string().starts_with("h.txt:1: segment"), "{err}");
    let err = histogram::read_text("h.txt", "0FFF:0010 1\n", Some(0x1000)).unwrap_err();
    assert!(err.to_string().contains("below the load segment"), "{err}");
    let err = histogram::read_text("h.txt", "10 20 30\n", None).unwrap_err();
    assert!(
        err.to_string().contains("expected `ADDRESS COUNT`"),
        "{err}"
    );
}

#[test]
fn map_with_no_code_symbols() {
    let text = "\
 Start  Stop   Length Name                   Class
 00000H 0003FH 00040H _DATA                  DATA

  Address         Publics by Value

 0000:0010       _table
 0000:9876  Abs  __acrtused
";
    let map = maps::parse("data.map", text.as_bytes(), None).unwrap();
    assert_eq!(map.format, MapFormat::MsLink);
    let mut h = Histogram::new(1);
    h.add(0x10, 5);
    let err = symbolise(&h, &map, &SymboliseOptions::default()).unwrap_err();
    assert!(matches!(
        err,
        SymboliseError::NoCodeSymbols { count: 2, .. }
    ));
    let msg = err.to_string();
    assert!(msg.contains("no code symbols"), "{msg}");
    assert!(
        msg.contains("no segment of the map has a CODE class"),
        "{msg}"
    );
}

#[test]
fn map_syntax_errors_name_file_and_line() {
    let wlink = "\
                        +--------------+
                        |   Segments   |
                        +--------------+

Segment                Class          Group          Address         Size
=======                =====          =====          =======         ====

_TEXT                  CODE           AUTO           zzzz:0010       0000175e
";
    let err = maps::parse("x.map", wlink.as_bytes(), Some(MapFormat::Watcom)).unwrap_err();
    assert!(matches!(err, MapError::Syntax { line: 8, .. }), "{err}");
    assert!(err.to_string().starts_with("x.map:8: "), "{err}");

    let dbg = "version\tmajor=2,minor=0\nseg\tid=0,name=\"CODE\",size=0x10\n";
    let err = maps::parse("g.dbg", dbg.as_bytes(), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "g.dbg:2: seg record without numeric `start=`"
    );

    let dbg3 = "version\tmajor=3,minor=0\n";
    let err = maps::parse("g.dbg", dbg3.as_bytes(), None).unwrap_err();
    assert!(err.to_string().contains("only major=2"), "{err}");

    let nm = "00001000 T main\n00001010 Q\n";
    let err = maps::parse("sym.txt", nm.as_bytes(), Some(MapFormat::Nm)).unwrap_err();
    assert!(err.to_string().contains(":2:"), "{err}");

    let link =
        "  Address         Publics by Value\n\n 0000:0010\nProgram entry point at 00zz:0000\n";
    let err = maps::parse("l.map", link.as_bytes(), None).unwrap_err();
    assert!(err.to_string().starts_with("l.map:3: "), "{err}");

    let cc = "Exports list by value:\n----------------------\n_main 00085C RLA  _x\n";
    let err = maps::parse("c.map", cc.as_bytes(), None).unwrap_err();
    assert!(err.to_string().starts_with("c.map:3: "), "{err}");
}

#[test]
fn unknown_map_format_lists_what_was_tried() {
    let err = maps::parse("README", b"This is not a map.\n", None).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("tried"), "{msg}");
    assert!(msg.contains("Publics by Value"), "{msg}");
    assert!(msg.contains("Linker script and memory map"), "{msg}");
    // A truncated ELF is an error, not a panic.
    let err = maps::parse("bad.elf", b"\x7fELF\x01\x02", None).unwrap_err();
    assert!(err.to_string().contains("bad.elf"), "{err}");
}

#[test]
fn shift_jis_names_decode_and_broken_bytes_warn() {
    // `_表示` in Shift-JIS inside an MS LINK map.
    let mut bytes = b"  Address         Publics by Value\r\n\r\n 0000:0010       _".to_vec();
    bytes.extend_from_slice(b"\x95\x5c\x8e\xa6");
    bytes.extend_from_slice(b"\r\n");
    let map = maps::parse("sjis.map", &bytes, None).unwrap();
    assert_eq!(map.encoding, Some(TextEncoding::ShiftJis));
    assert_eq!(map.symbols.symbols()[0].name, "_表示");
    assert!(map.warnings.is_empty());

    // A truncated double-byte character: decoded with U+FFFD and a warning.
    let mut bad = b"  Address         Publics by Value\r\n\r\n 0000:0010       _ab".to_vec();
    bad.push(0x95);
    bad.extend_from_slice(b"\r\n");
    let map = maps::parse("bad.map", &bad, None).unwrap();
    assert_eq!(map.encoding, Some(TextEncoding::ShiftJisLossy));
    assert_eq!(map.warnings.len(), 1);
    assert!(map.warnings[0].contains("bad.map"), "{}", map.warnings[0]);
}

#[test]
fn summing_histograms_with_different_buckets_is_refused() {
    let mut a = Histogram::new(1);
    a.add(0x10, 1);
    let mut b = Histogram::new(16);
    b.add(0x10, 1);
    b.sources.push("b".into());
    let err = a.merge(b).unwrap_err();
    assert!(err.contains("1-byte and 16-byte"), "{err}");
}
