use std::path::Path;

use retroprof_megadrive::rom::{Region, Rom, RomError, MAX_ROM_BYTES};

fn header_image(size: usize, region: &[u8]) -> Vec<u8> {
    let mut d = vec![0u8; size];
    d[0x100..0x110].copy_from_slice(b"SEGA MEGA DRIVE ");
    d[0x120..0x124].copy_from_slice(b"TEST");
    d[0x1F0..0x1F0 + region.len()].copy_from_slice(region);
    d
}

fn load(d: Vec<u8>) -> Result<Rom, RomError> {
    Rom::from_bytes(Path::new("x.bin"), d)
}

/// Issue 21: `run /dev/zero` read 4.2 GB before checking the size. A
/// FIFO (made here, never the system's /dev) is refused without
/// blocking, and a huge sparse file is refused before it is read.
#[cfg(unix)]
#[test]
fn load_checks_file_kind_and_size_before_reading() {
    let d = std::env::temp_dir().join(format!("retroprof-romload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let fifo = d.join("endless.bin");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = Rom::load(&fifo).unwrap_err();
    assert!(matches!(e, RomError::NotAFile { .. }), "{e}");
    assert!(e.to_string().contains("endless.bin"), "{e}");
    let big = d.join("big.bin");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(8 << 30).unwrap(); // 8 GiB, sparse: nothing on disk
    drop(f);
    let e = Rom::load(&big).unwrap_err();
    assert!(matches!(e, RomError::TooLarge { .. }), "{e}");
    let ok = d.join("ok.bin");
    std::fs::write(&ok, header_image(0x400, b"U")).unwrap();
    Rom::load(&ok).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn header_fields_and_checksum() {
    let mut d = header_image(0x400, b"JUE");
    d[0x200] = 0x12;
    d[0x201] = 0x34;
    d[0x3FE] = 0x00;
    d[0x3FF] = 0x01;
    d[0x18E] = 0x12;
    d[0x18F] = 0x35;
    d[0x1B0..0x1BC].copy_from_slice(&[b'R', b'A', 0xF8, 0x20, 0, 0x20, 0, 1, 0, 0x20, 0x3F, 0xFF]);
    let r = load(d).unwrap();
    assert_eq!(r.header.domestic_name, "TEST");
    assert_eq!(r.computed_checksum, 0x1235);
    assert!(r.checksum_ok());
    assert_eq!(r.region(), Region::UsaNtsc);
    let s = r.header.sram.unwrap();
    assert!(s.odd_only);
    assert_eq!((s.start, s.end, s.size()), (0x200001, 0x203FFF, 0x2000));
}

#[test]
fn entry_point_title_and_forced_standard() {
    let mut d = header_image(0x200, b"J");
    d[4..8].copy_from_slice(&0x0000_0204u32.to_be_bytes());
    let r = load(d).unwrap();
    assert_eq!(r.entry_point(), 0x204);
    // No overseas name: the domestic one.
    assert_eq!(r.title(), "TEST");
    assert_eq!(r.region_with_standard(false), Region::JapanNtsc);
    assert_eq!(r.region_with_standard(true), Region::EuropePal);
    let mut d = header_image(0x200, b"E");
    d[0x150..0x156].copy_from_slice(b"ABROAD");
    let r = load(d).unwrap();
    assert_eq!(r.title(), "ABROAD");
    // A European ROM forced to NTSC runs on an American console.
    assert_eq!(r.region_with_standard(false), Region::UsaNtsc);
}

#[test]
fn regions() {
    assert_eq!(
        load(header_image(0x200, b"E")).unwrap().region(),
        Region::EuropePal
    );
    assert_eq!(
        load(header_image(0x200, b"J")).unwrap().region(),
        Region::JapanNtsc
    );
    assert_eq!(
        load(header_image(0x200, b"8")).unwrap().region(),
        Region::EuropePal
    );
    assert_eq!(
        load(header_image(0x200, b"4")).unwrap().region(),
        Region::UsaNtsc
    );
}

#[test]
fn bad_images() {
    assert!(matches!(load(vec![]), Err(RomError::Empty { .. })));
    assert!(matches!(
        load(vec![0; 100]),
        Err(RomError::Truncated { len: 100, .. })
    ));
    let mut odd = header_image(0x400, b"U");
    odd.push(0);
    assert!(matches!(load(odd), Err(RomError::OddSize { .. })));
    assert!(matches!(
        load(vec![0x41; 0x400]),
        Err(RomError::BadHeader { .. })
    ));
    assert!(matches!(
        load(vec![0; 0x4200]),
        Err(RomError::Interleaved { .. })
    ));
    let big = header_image(MAX_ROM_BYTES + 2, b"U");
    assert!(matches!(load(big), Err(RomError::TooLarge { .. })));
    let e = load(vec![0x41; 0x400]).unwrap_err().to_string();
    assert!(e.contains("x.bin") && e.contains("0x100"), "{e}");
}

#[test]
fn directory_and_missing() {
    let dir = std::env::temp_dir();
    assert!(matches!(Rom::load(&dir), Err(RomError::IsDirectory { .. })));
    assert!(matches!(
        Rom::load(Path::new("/nonexistent/rom.bin")),
        Err(RomError::Io { .. })
    ));
}
