use retroprof_megadrive::cart::Cart;
use retroprof_megadrive::rom::{Rom, SramInfo};
use retroprof_megadrive::system::test_support;
use std::path::Path;

fn rom_of(size: usize) -> Rom {
    let mut d = vec![0u8; size];
    d[0x100..0x104].copy_from_slice(b"SEGA");
    for bank in 0..size / 0x80000 {
        d[bank * 0x80000 + 0x1000] = bank as u8;
    }
    Rom::from_bytes(Path::new("t.bin"), d).unwrap()
}

#[test]
fn linear_and_open_bus() {
    let c = Cart::new(&rom_of(0x80000 * 2));
    assert!(!c.mapper);
    assert_eq!(c.read_byte(0x81000), Some(1));
    assert_eq!(c.read_byte(0x100000), None);
}

#[test]
fn ssf2_mapper() {
    let mut c = Cart::new(&rom_of(0x80000 * 10));
    assert!(c.mapper);
    assert_eq!(c.read_byte(0x381000), Some(7));
    c.write_mapper(0xA130FF, 9);
    assert_eq!(c.read_byte(0x381000), Some(9));
    c.write_mapper(0xA130F3, 8);
    assert_eq!(c.read_byte(0x081000), Some(8));
    assert_eq!(c.read_word(0x001000), Some(0x0000));
}

/// Word reads (the fixed region's one-load path included) and fetch
/// window agree with byte reads everywhere, whatever the mapper and
/// SRAM registers hold.
#[test]
fn word_reads_and_fetch_window_match_byte_reads() {
    // Every word different from its neighbours and from its bank's.
    let varied = |size: usize| {
        let mut r = rom_of(size);
        for (i, b) in r.data.iter_mut().enumerate() {
            *b = (i ^ (i >> 8) ^ (i >> 19)) as u8;
        }
        r.header.sram = None;
        r
    };
    let mut big = varied(0x80000 * 10);
    big.header.sram = Some(SramInfo {
        start: 0x200001,
        end: 0x20FFFF,
        odd_only: true,
        even_only: false,
    });
    for (name, r, window_end) in [
        ("linear", varied(0x80000 * 2), 0x100000),
        ("mapper + SRAM", big, 0x80000),
    ] {
        let mut c = Cart::new(&r);
        let w = test_support::fetch_window(&c).expect("window");
        assert_eq!((w.base, w.words.len() * 2), (0, window_end), "{name}");
        for regs in [[0u8, 0, 0], [1, 9, 3], [3, 2, 7]] {
            c.write_mapper(0xA130F1, regs[0]);
            c.write_mapper(0xA130F3, regs[1]);
            c.write_mapper(0xA130FF, regs[2]);
            for a in (0..0x40_0000u32).step_by(2) {
                let bytes = c.read_byte(a).zip(c.read_byte(a + 1));
                let word = bytes.map(|(h, l)| u16::from_be_bytes([h, l]));
                if word.is_some() {
                    assert_eq!(c.read_word(a), word, "{name} {regs:?} at {a:06x}");
                }
                if let Some(&f) = w.words.get(a as usize / 2) {
                    assert_eq!(Some(f), word, "{name} {regs:?} window at {a:06x}");
                }
            }
        }
    }
}

#[test]
fn sram_odd_bytes() {
    let mut r = rom_of(0x80000);
    r.header.sram = Some(SramInfo {
        start: 0x200001,
        end: 0x20FFFF,
        odd_only: true,
        even_only: false,
    });
    let mut c = Cart::new(&r);
    assert!(c.sram_mapped);
    assert!(c.write_byte(0x200001, 0x42));
    assert_eq!(c.read_byte(0x200001), Some(0x42));
    assert_eq!(c.read_word(0x200000), Some(0xFF42));
    assert!(c.sram_dirty);
    c.write_mapper(0xA130F1, 3); // write protect
    c.write_byte(0x200001, 0x00);
    assert_eq!(c.read_byte(0x200001), Some(0x42));
}
