use retroprof_megadrive::PcSet;

#[test]
fn pc_set() {
    let mut s = PcSet::new();
    assert!(!s.contains(0x1234));
    s.insert(0x1234);
    s.insert(0xFF0000);
    assert!(s.contains(0x1234) && s.contains(0xFF0000));
    assert!(!s.contains(0x1236));
    s.remove(0x1234);
    assert!(!s.contains(0x1234));
    assert!(!s.is_empty());
}
