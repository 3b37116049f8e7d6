use retroprof_megadrive::ReferenceRules;

#[test]
fn rules_by_name() {
    let mut r = ReferenceRules::default();
    assert!(r.names().is_empty());
    assert!(r.enable("ym-busy-grid"));
    assert!(r.ym_busy_grid);
    assert_eq!(r.names(), ["ym-busy-grid"]);
    assert!(!r.enable("fast"));
    for (name, _) in ReferenceRules::RULES {
        assert!(r.enable(name));
    }
    assert_eq!(r, ReferenceRules::ALL);
    assert_eq!(r.names().len(), 6);
}
