use retroprof_megadrive::timing::YM_BUSY_MCLK;
use retroprof_megadrive::ym2612::Ym2612;

#[test]
fn timer_a_overflow_and_reset() {
    let mut y = Ym2612::default();
    // NA = 1000 -> 24 samples.
    y.write(0, 0x24, 0);
    y.write(1, (1000 >> 2) as u8, 0);
    y.write(0, 0x25, 0);
    y.write(1, (1000 & 3) as u8, 0);
    y.write(0, 0x27, 0);
    y.write(1, 0x05, 100);
    let period = 24 * 1008;
    assert_eq!(y.read(100 + period - 1) & 1, 0);
    assert_eq!(y.read(100 + period) & 1, 1);
    // Reset flag, keep running.
    y.write(0, 0x27, 100 + period);
    y.write(1, 0x15, 100 + period);
    assert_eq!(y.read(100 + period + 1) & 1, 0);
    assert_eq!(y.read(100 + 2 * period) & 1, 1);
}

#[test]
fn timer_b_and_busy() {
    let mut y = Ym2612::default();
    y.write(0, 0x26, 0);
    y.write(1, 0xFF, 0); // NB = 255: 16 samples
    y.write(0, 0x27, 0);
    y.write(1, 0x0A, 0);
    assert_eq!(y.read(1) & 0x80, 0x80, "busy after a data write");
    assert_eq!(y.read(YM_BUSY_MCLK) & 0x80, 0);
    assert_eq!(y.read(16 * 1008 - 1) & 2, 0);
    assert_eq!(y.read(16 * 1008) & 2, 2);
    // Flag disabled: no flag.
    let mut y = Ym2612::default();
    y.write(0, 0x27, 0);
    y.write(1, 0x02, 0);
    assert_eq!(y.read(10_000_000) & 2, 0);
}

#[test]
fn busy_end_on_the_reference_grid() {
    // Ours: 32 x 42 mclk after the data write.
    let mut y = Ym2612::default();
    y.write(1, 0, 100);
    assert_eq!(y.read(100 + YM_BUSY_MCLK - 1) & 0x80, 0x80);
    assert_eq!(y.read(100 + YM_BUSY_MCLK) & 0x80, 0);
    // The reference's rule: from the next 42-mclk edge counted from the
    // frame origin (here 1,000): write at 1,100 -> edge 1,126.
    let mut y = Ym2612::default();
    y.busy_grid = Some(1_000);
    y.write(1, 0, 1_100);
    assert_eq!(y.read(1_126 + YM_BUSY_MCLK - 1) & 0x80, 0x80);
    assert_eq!(y.read(1_126 + YM_BUSY_MCLK) & 0x80, 0);
    // A write on an edge is not moved.
    let mut y = Ym2612::default();
    y.busy_grid = Some(1_000);
    y.write(1, 0, 1_084);
    assert_eq!(y.read(1_084 + YM_BUSY_MCLK) & 0x80, 0);
}
