//! The HTML report of a run of the known-costs ROM: one self-contained
//! page (no external resources), two SVG plots with one point per frame,
//! the top functions and worst frames tables, and the worst frame's
//! screenshot as an embedded PNG.

use std::path::{Path, PathBuf};

use retroprof_mdprof::html;
use retroprof_mdprof::{load_symbols, ProfileOptions, Session};
use retroprof_megadrive::Rom;

fn rom_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testroms/out/knowncosts/rom.bin")
}

fn unbase64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("bad base64 byte {c}"),
    } as u32;
    let b = s.as_bytes();
    assert_eq!(b.len() % 4, 0);
    let mut out = Vec::new();
    for c in b.chunks(4) {
        let pad = c.iter().filter(|&&x| x == b'=').count();
        let mut n = 0u32;
        for &x in c {
            n = n << 6 | if x == b'=' { 0 } else { val(x) };
        }
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..3 - pad]);
    }
    out
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn html_report_is_self_contained() {
    let path = rom_path();
    let rom = Rom::load(&path).expect("testroms/out/knowncosts/rom.bin");
    let syms = load_symbols(&path, None).unwrap();
    let frames = 480;
    let session = Session::new(
        rom,
        "knowncosts".into(),
        syms,
        ProfileOptions {
            frames,
            ..ProfileOptions::default()
        },
    )
    .unwrap();
    let report = session.run(&mut |_, _| {});
    let worst = report.worst_frames[0];
    let shot = html::screenshot(&session, worst)
        .unwrap()
        .expect("worst frame ran");
    assert_eq!(shot.frame, worst);
    assert_eq!((shot.width, shot.height), (320, 224), "H40 V28");
    let page = html::render(&report, Some(&shot));
    assert_eq!(page, html::render(&report, Some(&shot)), "deterministic");

    // To look at it: RETROPROF_HTML_OUT=/tmp/report.html cargo test ...
    if let Some(out) = std::env::var_os("RETROPROF_HTML_OUT") {
        std::fs::write(out, &page).unwrap();
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    // Self-contained: nothing fetched from elsewhere.
    for bad in [
        "<script",
        "<link",
        "src=\"http",
        "href=\"http",
        "url(",
        "@import",
    ] {
        assert!(!page.contains(bad), "page contains {bad}");
    }
    // Balanced structure.
    for tag in ["svg", "table", "tr", "div", "h2", "body", "html"] {
        assert_eq!(
            count(&page, &format!("<{tag}"))
                - count(&page, &format!("<{tag}s")) * (tag == "tr") as usize,
            count(&page, &format!("</{tag}>")),
            "<{tag}> not balanced"
        );
    }
    assert_eq!(count(&page, "<svg"), 2);
    // The load plot has one point per frame.
    let pts = page
        .split("class=\"load\"")
        .nth(1)
        .unwrap()
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(pts.split(' ').count(), frames as usize);
    // Dropped frames are drawn (phase B drops by frame 480).
    assert!(report.summary.dropped_frames > 0);
    assert!(page.contains("class=\"dropped\""));
    assert!(page.contains("class=\"dma-vblank\""));
    // Tables.
    let top = &report.functions[0].name;
    assert!(
        page.contains(&format!("<td>{top}")),
        "top function {top} missing"
    );
    assert!(page.contains(&format!("<td class=\"n\">{worst}</td>")));
    // The screenshot decodes to the PNG we embedded.
    let b64 = page
        .split("src=\"data:image/png;base64,")
        .nth(1)
        .expect("embedded PNG")
        .split('"')
        .next()
        .unwrap();
    let png = unbase64(b64);
    assert_eq!(png, shot.png);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}
