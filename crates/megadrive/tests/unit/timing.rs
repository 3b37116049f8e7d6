use retroprof_megadrive::timing::*;

/// 68000 -> CRAM/VSRAM moves its per-line count in words: a whole
/// 128-byte CRAM load (64 words) fits in one H40 VBlank line (198
/// words), a direct-colour demo's 88,704-byte CRAM DMA takes 224 blank
/// H40 lines (44,352 words / 198), not 448.
#[test]
fn cram_vsram_dma_counts_words() {
    assert_eq!(
        dma_bytes_per_line(DmaBandwidth::ToCramVsram, true, true),
        396
    );
    assert_eq!(
        dma_bytes_per_line(DmaBandwidth::ToCramVsram, true, false),
        322
    );
    assert_eq!(
        dma_bytes_per_line(DmaBandwidth::ToCramVsram, false, true),
        36
    );
    assert_eq!(
        dma_bytes_per_line(DmaBandwidth::ToCramVsram, false, false),
        32
    );
    // VRAM stays in bytes.
    assert_eq!(dma_bytes_per_line(DmaBandwidth::ToVram, true, true), 204);
    let bw = dma_bytes_per_line(DmaBandwidth::ToCramVsram, true, true);
    assert_eq!(88_704u64.div_ceil(bw), 224);
}

#[test]
fn frame_lengths() {
    let ntsc = FrameGeometry::new(false, false, true);
    assert_eq!(ntsc.mclk_per_frame(), 896_040);
    let pal = FrameGeometry::new(true, true, true);
    assert_eq!(pal.mclk_per_frame(), 313 * 3420);
}

#[test]
fn v_counter_sequences() {
    // NTSC V28: 0..=0xEA then 0xE5..=0xFF, 262 lines.
    let seq: Vec<u16> = (0..262).map(|l| v_counter(l, false, false)).collect();
    assert_eq!(seq[0xEA], 0xEA);
    assert_eq!(seq[0xEB], 0xE5);
    assert_eq!(seq[261], 0xFF);
    // PAL V28: 0..=0x102 then 0x1CA..=0x1FF
    let seq: Vec<u16> = (0..313).map(|l| v_counter(l, true, false)).collect();
    assert_eq!(seq[0x102], 0x102);
    assert_eq!(seq[0x103], 0x1CA);
    assert_eq!(seq[312], 0x1FF);
    // PAL V30
    let seq: Vec<u16> = (0..313).map(|l| v_counter(l, true, true)).collect();
    assert_eq!(seq[0x10A], 0x10A);
    assert_eq!(seq[0x10B], 0x1D2);
    assert_eq!(seq[312], 0x1FF);
    // NTSC V30 runs 0..=0x105 continuously (only 8 bits are read).
    assert_eq!(v_counter(261, false, true) & 0xFF, 0x05);
}

#[test]
fn h_counter_sequences() {
    // At the HBlank flag start the counter has its documented value.
    assert_eq!(h_counter(HBLANK_H32.0, false), 0x126);
    assert_eq!(h_counter(HBLANK_H40.0, true), 0x166);
    // The H32 HBlank end (mclk 860) is 58 pixels later: 0x126, 0x127,
    // 0x1D2..=0x1FF (46), 0x000..=0x009.
    assert_eq!(h_counter(HBLANK_H32.1, false), 0x00A);
    // Every value of each sequence appears, in order, over one line.
    for (h40, n) in [(false, 342usize), (true, 420usize)] {
        let mut seen = std::collections::BTreeSet::new();
        let step = if h40 { 1 } else { 10 };
        let mut m = 0;
        while m < MCLK_PER_LINE {
            seen.insert(h_counter(m, h40));
            m += step;
        }
        assert_eq!(seen.len(), n, "h40={h40}");
        assert!(!seen.contains(&(if h40 { 0x16D } else { 0x128 })));
    }
}

/// md-timing.md: burn(500) = 5,038 table cycles, measured 5,115.8 per
/// call in GPGX (averaged over 4,348 calls). Replay the instruction
/// sequence through the refresh model, calls back to back.
#[test]
fn refresh_burn500() {
    let mut r = Refresh::default();
    let mut now: u64 = 0;
    let calls = 4348u64;
    let mut instr = Vec::new();
    instr.push(8u64); // move.w #500,d0
    instr.extend(std::iter::repeat_n(10u64, 500)); // dbra taken
    instr.push(14); // dbra not taken
    instr.push(16); // rts
    let start = now;
    for _ in 0..calls {
        for &c in &instr {
            now += c;
            now += r.at_boundary(now) as u64;
        }
    }
    let per_call = (now - start) as f64 / calls as f64;
    assert!(
        (per_call - 5115.8).abs() < 3.0,
        "burn(500) = {per_call} cycles per call, GPGX measured 5115.8"
    );
}
