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

/// The timers' `next_due` skip both ways: the same pseudo-random run of
/// timer register writes (0x24-0x27 with every load, enable and reset
/// bit, short and long periods), other registers, part 1 writes, status
/// reads and `reset`, at increasing times (gaps from 0 to several
/// overflow periods), once with the skip and once with every access
/// updating the timers in full: every status read and the whole state
/// (`Debug`: registers, flags, busy time, timers) after every access are
/// the same, and both timers overflow in the run.
#[test]
fn timer_skip_matches_full_updates() {
    let mut fast = Ym2612::default();
    let mut full = Ym2612::default();
    full.set_due_skip(false);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut now = 0u64;
    let (mut a_over, mut b_over) = (false, false);
    for i in 0..200_000 {
        let r = next();
        now += match r % 8 {
            0 => 0,
            1..=4 => r >> 40 & 0x3FF,
            5 | 6 => r >> 32 & 0xFFFF,
            _ => r >> 24 & 0xF_FFFF,
        };
        let v = (r >> 8) as u8;
        match (r >> 16) % 16 {
            0..=5 => {
                let (sf, sl) = (fast.read(now), full.read(now));
                assert_eq!(sf, sl, "read {i} at {now}");
                a_over |= sf & 1 != 0;
                b_over |= sf & 2 != 0;
            }
            6..=11 => {
                let reg = [0x24, 0x25, 0x26, 0x27, 0x27, 0x2A][((r >> 20) % 6) as usize];
                let v = if reg == 0x24 { v | 0xC0 } else { v };
                let v = if reg == 0x27 { v | 0x0C } else { v };
                let v = if reg == 0x26 { v | 0x80 } else { v };
                let part = if (r >> 28) % 8 == 0 { 2 } else { 0 };
                for y in [&mut fast, &mut full] {
                    y.write(part, reg, now);
                    y.write(part + 1, v, now);
                }
            }
            12..=14 => {
                for y in [&mut fast, &mut full] {
                    y.write(((r >> 20) % 4) as u32, v, now);
                }
            }
            _ => {
                if (r >> 20) % 64 == 0 {
                    fast.reset();
                    full.reset();
                }
            }
        }
        assert_eq!(
            format!("{fast:?}"),
            format!("{full:?}"),
            "access {i} at {now}"
        );
    }
    assert!(a_over && b_over, "{a_over} {b_over}");
}
