use retroprof_megadrive::{Buttons, InputScript};

/// Issue 21: `+5:R` and `0:` were accepted.
#[test]
fn signs_and_empty_button_lists_are_refused() {
    for bad in [
        "+5:R",
        "-5:R",
        "0:",
        "0: ",
        "5-+7:R",
        "99999999999999999999:R",
        " :R",
    ] {
        let e = InputScript::parse_spec(bad).unwrap_err();
        assert!(
            e.to_string().contains(bad.trim()) || !e.reason.is_empty(),
            "{e}"
        );
    }
    assert_eq!(
        InputScript::parse_spec("5:-").unwrap()[0].buttons,
        Buttons::NONE
    );
    assert!(InputScript::parse_spec("5-7:R").is_ok());
}

#[test]
fn parse_reference_script() {
    let s = InputScript::parse(&[
        "60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C",
    ])
    .unwrap();
    assert_eq!(s.spans.len(), 8);
    assert_eq!(s.buttons_at(59), Buttons::NONE);
    assert_eq!(s.buttons_at(60), Buttons::RIGHT);
    assert_eq!(s.buttons_at(205), Buttons::RIGHT | Buttons::C);
    assert_eq!(s.buttons_at(300), Buttons::RIGHT | Buttons::START);
    assert_eq!(s.buttons_at(650), Buttons::NONE);
    assert_eq!(s.buttons_at(1199), Buttons::RIGHT);
    assert_eq!(s.buttons_at(1200), Buttons::NONE);
}

#[test]
fn forms() {
    let s = InputScript::parse(&["5:ab", "10-:M", "3-4:-"]).unwrap();
    assert_eq!(s.buttons_at(5), Buttons::A | Buttons::B);
    assert_eq!(s.buttons_at(4), Buttons::NONE);
    assert_eq!(s.buttons_at(6), Buttons::NONE);
    assert_eq!(s.buttons_at(1_000_000), Buttons::MODE);
    assert_eq!(format!("{}", Buttons::parse("SMUXYZ").unwrap()), "USXYZM");
}

#[test]
fn errors() {
    for bad in ["", "5", "a-b:U", "5-3:U", "5:Q", "5-6:U,", "-5:U", "5:é"] {
        let e = InputScript::parse(&[bad]).unwrap_err();
        assert!(e.to_string().contains("bad input spec"), "{bad}: {e}");
    }
}
