//! The HTML report of a run of the known-costs ROM: one self-contained
//! page (no external resources), two SVG plots with one point per frame,
//! the per-frame data the page's script shows on hover, the top functions
//! and worst frames tables, and the worst gameplay frame's screenshot as
//! an embedded PNG. Also the demo's terminal report, against a golden file
//! (80 columns).

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
    // Self-contained: nothing fetched from elsewhere, no address of
    // anywhere else at all.
    for bad in [
        "<link",
        "http:",
        "https:",
        "//www.",
        "url(",
        "@import",
        "<iframe",
        "fetch(",
        "XMLHttpRequest",
        "<script src",
    ] {
        assert!(!page.contains(bad), "page contains {bad}");
    }
    for (i, _) in page.match_indices("src=\"") {
        assert!(
            page[i..].starts_with("src=\"data:"),
            "a src that is not a data: URL at byte {i}"
        );
    }
    // The per-frame data: one entry per frame, matching the report.
    let data = page
        .split("<script type=\"application/json\" id=\"frame-data\">")
        .nth(1)
        .expect("frame data")
        .split("</script>")
        .next()
        .unwrap();
    assert_eq!(data, html::frame_data(&report));
    let v: serde_json::Value = serde_json::from_str(data).expect("frame data is JSON");
    let f = v["f"].as_array().unwrap();
    assert_eq!(f.len(), report.frames.len());
    let names = v["fn"].as_array().unwrap();
    for (rec, d) in report.frames.iter().zip(f) {
        let d = d.as_array().unwrap();
        assert_eq!(
            d[0].as_i64().unwrap(),
            (rec.load_pct * 100.0).round() as i64
        );
        assert_eq!(d[1].as_i64().unwrap(), rec.busy_cycles.round() as i64);
        assert_eq!(d[2].as_u64().unwrap(), rec.dropped as u64);
        let why = d[3].as_str().unwrap();
        assert_eq!(why.is_empty(), rec.loading.is_none(), "frame {}", rec.frame);
        assert_eq!(d[5].as_u64().unwrap(), rec.dma_vblank_bytes);
        assert_eq!(d[6].as_u64().unwrap(), rec.dma_active_bytes);
        let tops = d[9].as_array().unwrap();
        assert_eq!(tops.len(), 2 * rec.top.len());
        for (t, pair) in rec.top.iter().zip(tops.chunks(2)) {
            let name = names[pair[0].as_u64().unwrap() as usize].as_str().unwrap();
            assert_eq!(name, report.functions[t.function].name);
        }
    }
    // The boot frames are set aside and shaded; the worst frame is a
    // gameplay frame.
    let fl = report.summary.first_loop_frame.expect("a game loop");
    assert!(fl > 0);
    assert!(report.summary.loading_boot_frames >= fl);
    assert!(page.contains("class=\"loading\""));
    assert!(report.frame(worst).unwrap().loading.is_none());
    assert!(page.contains("the worst gameplay frame"));
    // The y axis goes to the data's maximum (100 %), not to 200 %.
    assert!(page.contains(">100%</text>"));
    assert!(!page.contains(">200%</text>"));
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
    assert_eq!(count(&page, "<script"), 2, "the data and the script");
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

/// The demo's terminal report (the built-in known-costs ROM, 600 frames:
/// `retroprof profile --frames 600` with no ROM): a golden file, every
/// line within 80 columns.
#[test]
fn demo_terminal_report_golden_80_columns() {
    let (rom, syms) = retroprof_mdprof::demo::load();
    let session = Session::new(
        rom,
        retroprof_mdprof::demo::LABEL.into(),
        Some(syms),
        ProfileOptions {
            frames: 600,
            ..ProfileOptions::default()
        },
    )
    .unwrap();
    let report = session.run(&mut |_, _| {});
    let text = retroprof_mdprof::output::terminal(&report, false);
    for (i, l) in text.lines().enumerate() {
        assert!(
            l.chars().count() <= 80,
            "line {} is {} columns: {l}",
            i + 1,
            l.chars().count()
        );
    }
    // Gameplay frames first: the boot frames are set aside, so no frame
    // before the first game loop is over 50 % (`--fail-over-load 50`).
    let fl = report.summary.first_loop_frame.unwrap();
    assert!(retroprof_mdprof::output::frames_over_load(&report, 50.0)
        .iter()
        .all(|&f| f >= fl));
    retroprof_testkit::check_golden_text(
        &retroprof_testkit::golden_path(env!("CARGO_MANIFEST_DIR"), "demo_terminal.txt"),
        &text,
    );
}
