//! The per-frame columns: one table that the per-frame CSV (header and
//! rows), the JSON report and the HTML report all read.
//!
//! Each [`FrameColumn`] names one figure of a [`FrameRecord`]: its name is
//! the CSV header and the JSON field, its [`Cell`] says how it is written
//! (CSV: cycles 1 decimal, percentages 2 decimals, flags 0/1, absent lines
//! -1; people: thousands separators, percentages 1 decimal, flags
//! `yes`/empty). The JSON report is [`FrameRecord`] serialised by serde;
//! a unit test checks that every JSON field of a frame is a column of this
//! table with the same value and that every JSON column is a JSON field,
//! so a field added to [`FrameRecord`] without its column (or a column
//! without its field) fails the tests.
//!
//! To add a per-frame figure: the field in [`FrameRecord`] (report.rs), its
//! value in `build::report`, and one row here. Columns with a
//! [`FrameColumn::present`] test appear in the CSV only for runs that have
//! them (their JSON field is then also left out when zero), so reports of
//! ROMs that never produce them stay as they were.

use crate::report::{FrameRecord, Report};

/// One value of a per-frame column, with its kind (which decides how it
/// is written).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    /// A plain integer (frame number, counts).
    Count(u64),
    /// Bytes (people: thousands separators).
    Bytes(u64),
    /// 68000 cycles (CSV: 1 decimal; people: rounded, thousands separators).
    Cycles(f64),
    /// Whole 68000 cycles (CSV and JSON: an integer; people: thousands).
    WholeCycles(u64),
    /// A percentage (CSV: 2 decimals; people: 1 decimal).
    Pct(f64),
    /// A yes/no (CSV: 0/1; JSON: a boolean; people: `yes` or empty).
    Flag(bool),
    /// A scanline, absent as `None` (CSV: -1; JSON: null; people: empty).
    Line(Option<u16>),
    /// Text (CSV quoted when needed; empty when `None`).
    Text(Option<&'a str>),
    /// Cycles that may be absent (CSV: empty when `None`).
    OptCycles(Option<f64>),
    /// A name that may be absent (CSV: empty; JSON: a string, the field
    /// left out when `None`).
    Name(Option<&'static str>),
}

/// The value of column `c` for frame `f` of report `r`.
pub type Getter = for<'a> fn(&'a Report, &'a FrameRecord) -> Cell<'a>;

/// One per-frame column.
pub struct FrameColumn {
    /// CSV header and JSON field name.
    pub name: &'static str,
    /// Header for people (HTML tables).
    pub label: &'static str,
    /// Part of the JSON frame record under `name` (false: derived for the
    /// CSV only, such as the frame's top function by name).
    pub json: bool,
    /// `Some(test)`: only in the CSV of runs for which `test` holds.
    pub present: Option<fn(&Report) -> bool>,
    pub get: Getter,
}

fn has_kdebug_timers(r: &Report) -> bool {
    r.kdebug.as_ref().is_some_and(|k| k.timer_protocol_seen())
}

macro_rules! col {
    ($name:literal, $label:literal, |$r:ident, $f:ident| $e:expr) => {
        FrameColumn {
            name: $name,
            label: $label,
            json: true,
            present: None,
            get: |$r, $f| {
                let _ = &$r;
                $e
            },
        }
    };
}

/// The per-frame columns in CSV order (the `--watch` columns follow them).
pub const FRAME_COLUMNS: &[FrameColumn] = &[
    col!("frame", "frame", |_r, f| Cell::Count(f.frame)),
    col!("busy_cycles", "busy cycles", |_r, f| Cell::Cycles(
        f.busy_cycles
    )),
    col!("idle_cycles", "idle cycles", |_r, f| Cell::Cycles(
        f.idle_cycles
    )),
    col!("load_pct", "load %", |_r, f| Cell::Pct(f.load_pct)),
    col!("dropped", "dropped", |_r, f| Cell::Flag(f.dropped)),
    col!("dma_vblank_bytes", "DMA VBlank bytes", |_r, f| Cell::Bytes(
        f.dma_vblank_bytes
    )),
    col!("dma_active_bytes", "DMA active bytes", |_r, f| Cell::Bytes(
        f.dma_active_bytes
    )),
    col!("frame_cycles", "frame cycles", |_r, f| Cell::Cycles(
        f.frame_cycles
    )),
    col!("loop_starts", "loop starts", |_r, f| Cell::Count(
        f.loop_starts as u64
    )),
    col!("idle_enter_line", "wait line", |_r, f| Cell::Line(
        f.idle_enter_line
    )),
    col!("loop_start_line", "loop start line", |_r, f| Cell::Line(
        f.loop_start_line
    )),
    col!("dma_last_line", "last DMA line", |_r, f| Cell::Line(
        f.dma_last_line
    )),
    col!("dma_fill_copy_bytes", "DMA fill/copy bytes", |_r, f| {
        Cell::Bytes(f.dma_fill_copy_bytes)
    }),
    col!("dma_freeze_cycles", "DMA freeze cycles", |_r, f| {
        Cell::Cycles(f.dma_freeze_cycles)
    }),
    col!(
        "fifo_wait_cycles",
        "FIFO wait cycles",
        |_r, f| Cell::Cycles(f.fifo_wait_cycles)
    ),
    col!("refresh_cycles", "refresh cycles", |_r, f| Cell::Cycles(
        f.refresh_cycles
    )),
    col!(
        "z80_stall_cycles",
        "Z80 stall cycles",
        |_r, f| Cell::Cycles(f.z80_stall_cycles)
    ),
    col!("interrupts", "interrupts", |_r, f| Cell::Count(
        f.interrupts as u64
    )),
    col!("instructions", "instructions", |_r, f| Cell::Count(
        f.instructions
    )),
    col!("counted", "counted", |_r, f| Cell::Flag(f.counted)),
    FrameColumn {
        name: "top_function",
        label: "top function",
        json: false,
        present: None,
        get: |r, f| {
            Cell::Text(
                f.top
                    .first()
                    .and_then(|t| r.functions.get(t.function))
                    .map(|x| x.name.as_str()),
            )
        },
    },
    FrameColumn {
        name: "top_cycles",
        label: "top function cycles",
        json: false,
        present: None,
        get: |_r, f| Cell::OptCycles(f.top.first().map(|t| t.cycles)),
    },
    FrameColumn {
        name: "loading",
        label: "loading",
        json: true,
        present: None,
        get: |_r, f| Cell::Name(f.loading.map(crate::gameplay::Loading::name)),
    },
    FrameColumn {
        name: "kdebug_timer_spans",
        label: "KDebug timer spans",
        json: true,
        present: Some(has_kdebug_timers),
        get: |_r, f| Cell::Count(f.kdebug_timer_spans),
    },
    FrameColumn {
        name: "kdebug_timer_cycles",
        label: "KDebug timer cycles",
        json: true,
        present: Some(has_kdebug_timers),
        get: |_r, f| Cell::WholeCycles(f.kdebug_timer_cycles),
    },
];

/// The column called `name`.
pub fn column(name: &str) -> Option<&'static FrameColumn> {
    FRAME_COLUMNS.iter().find(|c| c.name == name)
}

/// The columns of report `r`'s per-frame CSV, in order.
pub fn csv_columns(r: &Report) -> impl Iterator<Item = &'static FrameColumn> + '_ {
    FRAME_COLUMNS
        .iter()
        .filter(move |c| c.present.is_none_or(|p| p(r)))
}

/// Quote a CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Cell<'_> {
    /// As written in the CSV.
    pub fn csv(&self) -> String {
        match *self {
            Cell::Count(v) | Cell::Bytes(v) | Cell::WholeCycles(v) => v.to_string(),
            Cell::Cycles(v) => format!("{v:.1}"),
            Cell::Pct(v) => format!("{v:.2}"),
            Cell::Flag(b) => (b as u8).to_string(),
            Cell::Line(l) => l.map_or_else(|| "-1".to_string(), |v| v.to_string()),
            Cell::Text(t) => t.map(csv_field).unwrap_or_default(),
            Cell::OptCycles(c) => c.map(|v| format!("{v:.1}")).unwrap_or_default(),
            Cell::Name(n) => n.map(csv_field).unwrap_or_default(),
        }
    }

    /// As shown to people (HTML tables; not escaped).
    pub fn human(&self) -> String {
        match *self {
            Cell::Count(v) => v.to_string(),
            Cell::Bytes(v) | Cell::WholeCycles(v) => crate::output::thousands(v as f64),
            Cell::Cycles(v) => crate::output::thousands(v),
            Cell::Pct(v) => format!("{v:.1}"),
            Cell::Flag(b) => if b { "yes" } else { "" }.to_string(),
            Cell::Line(l) => l.map(|v| v.to_string()).unwrap_or_default(),
            Cell::Text(t) => t.unwrap_or_default().to_string(),
            Cell::OptCycles(c) => c.map(crate::output::thousands).unwrap_or_default(),
            Cell::Name(n) => n.unwrap_or_default().to_string(),
        }
    }

    /// Numeric (right-aligned in tables).
    pub fn is_numeric(&self) -> bool {
        !matches!(self, Cell::Flag(_) | Cell::Text(_) | Cell::Name(_))
    }

    /// As the JSON report holds it (`None`: not a JSON value).
    pub fn json(&self) -> Option<serde_json::Value> {
        use serde_json::Value;
        Some(match *self {
            Cell::Count(v) | Cell::Bytes(v) | Cell::WholeCycles(v) => Value::from(v),
            Cell::Cycles(v) | Cell::Pct(v) => Value::from(v),
            Cell::Flag(b) => Value::from(b),
            Cell::Line(l) => l.map_or(Value::Null, Value::from),
            Cell::Name(n) => Value::from(n?),
            Cell::Text(_) | Cell::OptCycles(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{FrameFunction, FunctionStats};

    fn sample() -> Report {
        let mut r = Report::default();
        r.functions.push(FunctionStats {
            name: "main, \"x\"".into(),
            ..FunctionStats::default()
        });
        r.frames.push(FrameRecord {
            frame: 7,
            counted: true,
            busy_cycles: 1.25,
            idle_cycles: 2.5,
            frame_cycles: 128005.75,
            load_pct: 12.345,
            dropped: true,
            loop_starts: 3,
            idle_enter_line: Some(17),
            loop_start_line: None,
            dma_vblank_bytes: 11,
            dma_active_bytes: 12,
            dma_fill_copy_bytes: 13,
            dma_last_line: Some(200),
            dma_freeze_cycles: 4.5,
            fifo_wait_cycles: 5.5,
            refresh_cycles: 6.5,
            z80_stall_cycles: 7.5,
            interrupts: 9,
            instructions: 10,
            top: vec![FrameFunction {
                function: 0,
                cycles: 99.25,
            }],
            watch: vec![],
            kdebug_timer_spans: 2,
            kdebug_timer_cycles: 5113,
            loading: Some(crate::gameplay::Loading::DisplayOff),
        });
        r
    }

    #[test]
    fn every_json_field_of_a_frame_is_a_column_and_back() {
        let r = sample();
        let f = &r.frames[0];
        let v = serde_json::to_value(f).unwrap();
        let obj = v.as_object().unwrap();
        for c in FRAME_COLUMNS.iter().filter(|c| c.json) {
            let cell = (c.get)(&r, f);
            assert_eq!(
                obj.get(c.name),
                cell.json().as_ref(),
                "column {} vs JSON",
                c.name
            );
        }
        for k in obj.keys() {
            if k == "top" || k == "watch" {
                continue; // lists, not columns
            }
            assert!(
                column(k).is_some_and(|c| c.json),
                "JSON frame field {k} has no column"
            );
        }
    }

    #[test]
    fn csv_cells_keep_their_formats() {
        let r = sample();
        let f = &r.frames[0];
        let row: Vec<String> = FRAME_COLUMNS.iter().map(|c| (c.get)(&r, f).csv()).collect();
        assert_eq!(
            row.join(","),
            "7,1.2,2.5,12.35,1,11,12,128005.8,3,17,-1,200,13,4.5,5.5,6.5,7.5,9,10,1,\"main, \"\"x\"\"\",99.2,display-off,2,5113"
        );
        let empty = Report::default();
        // The KDebug columns only for runs with timer spans.
        assert_eq!(csv_columns(&empty).count(), FRAME_COLUMNS.len() - 2);
    }
}
