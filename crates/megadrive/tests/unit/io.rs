use retroprof_megadrive::io::{Io, PadKind, Port};
use retroprof_megadrive::timing::PAD6_TIMEOUT_MCLK;
use retroprof_megadrive::Buttons;

/// A pad with TH an output driven high and its 6-button count at 0. The
/// data bit is written while TH is still an input (TH reads high either
/// way), so no TH transition is counted and the count stays 0.
fn pad(kind: PadKind, b: Buttons) -> Port {
    let mut p = Port::default();
    p.kind = kind;
    p.buttons = b;
    p.write_data(0x40, 0);
    p.write_ctrl(0x40, 0);
    p
}

#[test]
fn three_button() {
    let mut p = pad(
        PadKind::ThreeButton,
        Buttons::UP | Buttons::C | Buttons::START,
    );
    assert_eq!(p.read_data(10), 0x40 | 0b01_1110);
    p.write_data(0x00, 20);
    // TH low: S A 0 0 D U -> start pressed (bit5=0), A released (bit4=1),
    // bits 3-2 = 0, D released (bit1=1), U pressed (bit0=0)
    assert_eq!(p.read_data(30), 0b01_0010);
}

#[test]
fn six_button_sequence_and_timeout() {
    let b = Buttons::A | Buttons::X | Buttons::MODE | Buttons::RIGHT;
    let mut p = pad(PadKind::SixButton, b);
    let mut t = 100;
    let mut reads = Vec::new();
    for i in 0..8 {
        let th = if i % 2 == 0 { 0x00 } else { 0x40 };
        p.write_data(th, t);
        t += 100;
        reads.push(p.read_data(t));
    }
    // phase 1 TH0: S A 0 0 D U: A pressed
    assert_eq!(reads[0], 0b10_0011);
    // phase 2 TH1: C B R L D U: R pressed
    assert_eq!(reads[1], 0x40 | 0b11_0111);
    assert_eq!(reads[2], 0b10_0011);
    assert_eq!(reads[3], 0x40 | 0b11_0111);
    // phase 5: S A 0 0 0 0
    assert_eq!(reads[4], 0b10_0000);
    // phase 6: C B M X Y Z: M and X pressed
    assert_eq!(reads[5], 0x40 | 0b11_0011);
    // phase 7: S A 1 1 1 1
    assert_eq!(reads[6], 0b10_1111);
    // After a pause longer than the timeout the count restarts.
    let mut p = pad(PadKind::SixButton, b);
    p.write_data(0x00, 0);
    p.write_data(0x40, 10);
    p.write_data(0x00, 20);
    p.write_data(0x40, 30);
    p.write_data(0x00, 40 + PAD6_TIMEOUT_MCLK + 1);
    assert_eq!(p.read_data(40 + PAD6_TIMEOUT_MCLK + 2), 0b10_0011);
}

#[test]
fn version_register() {
    let mut io = Io::new(true, false);
    assert_eq!(io.read(0, 0), 0xA0);
    let mut io = Io::new(true, true);
    assert_eq!(io.read(0, 0), 0xE0);
}
