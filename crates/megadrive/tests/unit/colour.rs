use retroprof_megadrive::render::{cram_to_rgb, cram_to_rgb_with, Intensity, LEVEL_G, LEVEL_RB};

#[test]
fn normal_levels_match_reference_values() {
    let rb: Vec<u8> = (0..8).map(|c| LEVEL_RB[c * 2]).collect();
    let g: Vec<u8> = (0..8).map(|c| LEVEL_G[c * 2]).collect();
    assert_eq!(rb, [0, 33, 66, 99, 140, 173, 206, 239]);
    assert_eq!(g, [0, 32, 69, 101, 138, 170, 207, 239]);
}

#[test]
fn cram_fields() {
    assert_eq!(cram_to_rgb(0x000E), 0xEF0000);
    assert_eq!(cram_to_rgb(0x00E0), 0x00EF00);
    assert_eq!(cram_to_rgb(0x0E00), 0x0000EF);
    assert_eq!(cram_to_rgb(0x0EEE), 0xEFEFEF);
    // Bits outside the three 3-bit fields are ignored.
    assert_eq!(cram_to_rgb(0xF111), 0);
    assert_eq!(cram_to_rgb_with(0x0EEE, Intensity::Highlight), 0xEFEFEF);
    assert_eq!(cram_to_rgb_with(0x0000, Intensity::Highlight), 0x737573);
    assert_eq!(cram_to_rgb_with(0x0EEE, Intensity::Shadow), 0x737573);
    assert_eq!(cram_to_rgb_with(0x0000, Intensity::Shadow), 0);
}
