//! Chrome / Perfetto trace-event JSON, written as a stream.
//!
//! ```text
//! {"traceEvents":[
//! {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"Mega Drive"}},
//! {"ph":"X","name":"main","cat":"cpu","pid":1,"tid":1,"ts":12.5,"dur":3.25},
//! ...
//! ],"displayTimeUnit":"ns"}
//! ```
//!
//! # Times
//! Every time is given as a whole number of **nanoseconds** (`u64`) and
//! written in the format's unit, microseconds, as an exact decimal (at most
//! 3 decimals). A complete event takes its start and END, and its `dur` is
//! `end - start` computed on those integers, so two slices that share a
//! boundary share it exactly and a slice whose integer end is inside its
//! parent's stays inside it.
//!
//! Consumers do not read these decimals exactly: Perfetto's JSON importer
//! turns a fractional `ts` into nanoseconds as `(int64)(ts * 1000.0)`
//! (truncating `12.345` to 12,344 ns) and speedscope adds `ts + dur` in
//! doubles. Both are exact when every time is a multiple of
//! [`EXACT_GRID_NS`] (125 ns = 1/8 us: a binary fraction whose value times
//! 1000 is a whole number), so a writer that wants slices to abut and nest
//! in every viewer puts its times on that grid: [`to_grid_ns`] converts a
//! clock count to it (monotone, so order and nesting are kept).
//!
//! Events are written as they are added, so a trace of any length needs no
//! memory; call [`TraceWriter::finish`] to close the JSON (a trace that was
//! not finished is not valid JSON, and [`super::atomic`] will have thrown it
//! away if the caller returned an error).

use std::io::Write;

use super::io_err;
use super::json::{push_f64, push_str};
use crate::Error;

/// The time grid (ns) on which trace times are exact in double-based
/// consumers (see the module documentation): 1/8 microsecond.
pub const EXACT_GRID_NS: u64 = 125;

/// `ticks` of a clock running at `hz` as nanoseconds rounded to the nearest
/// multiple of [`EXACT_GRID_NS`] (ties up). Monotone in `ticks`; computed in
/// integers (exact for any `ticks * 8_000_000` below 2^128).
pub fn to_grid_ns(ticks: u64, hz: u64) -> u64 {
    let hz = hz.max(1) as u128;
    let per_s = 1_000_000_000u128 / EXACT_GRID_NS as u128;
    let cells = (ticks as u128 * per_s * 2 + hz) / (hz * 2);
    (cells as u64).saturating_mul(EXACT_GRID_NS)
}

/// Push `ns` nanoseconds as microseconds, an exact decimal.
fn push_us(out: &mut String, ns: u64) {
    use std::fmt::Write as _;
    let (whole, frac) = (ns / 1000, ns % 1000);
    let _ = write!(out, "{whole}");
    if frac != 0 {
        let mut f = format!("{frac:03}");
        while f.ends_with('0') {
            f.pop();
        }
        out.push('.');
        out.push_str(&f);
    }
}

/// An argument value for an event's `args` object.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a str),
    Bool(bool),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}
impl From<u64> for Arg<'_> {
    fn from(v: u64) -> Self {
        Arg::UInt(v)
    }
}
impl From<u32> for Arg<'_> {
    fn from(v: u32) -> Self {
        Arg::UInt(v as u64)
    }
}
impl From<f64> for Arg<'_> {
    fn from(v: f64) -> Self {
        Arg::Float(v)
    }
}
impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Str(v)
    }
}
impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Bool(v)
    }
}

/// Scope of an instant event (`"s"` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Thread,
    Process,
    Global,
}

/// Streaming writer of a trace-event JSON object.
pub struct TraceWriter<W: Write> {
    w: std::io::BufWriter<W>,
    buf: String,
    first: bool,
    events: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Start the trace (writes `{"traceEvents":[`).
    pub fn new(w: W) -> Result<Self, Error> {
        let mut t = TraceWriter {
            w: std::io::BufWriter::with_capacity(1 << 16, w),
            buf: String::with_capacity(256),
            first: true,
            events: 0,
        };
        t.w.write_all(b"{\"traceEvents\":[").map_err(io_err)?;
        Ok(t)
    }

    /// Number of events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    fn begin(&mut self, ph: &str, name: &str, pid: u32, tid: u32) {
        self.buf.clear();
        if !self.first {
            self.buf.push(',');
        }
        self.buf.push_str("\n{\"ph\":\"");
        self.buf.push_str(ph);
        self.buf.push_str("\",\"name\":");
        push_str(&mut self.buf, name);
        self.buf.push_str(",\"pid\":");
        self.buf.push_str(&pid.to_string());
        self.buf.push_str(",\"tid\":");
        self.buf.push_str(&tid.to_string());
    }

    fn cat(&mut self, cat: &str) {
        if !cat.is_empty() {
            self.buf.push_str(",\"cat\":");
            push_str(&mut self.buf, cat);
        }
    }

    fn ts(&mut self, key: &str, ns: u64) {
        self.buf.push_str(",\"");
        self.buf.push_str(key);
        self.buf.push_str("\":");
        push_us(&mut self.buf, ns);
    }

    fn args(&mut self, args: &[(&str, Arg<'_>)]) {
        if args.is_empty() {
            return;
        }
        self.buf.push_str(",\"args\":{");
        for (i, (k, v)) in args.iter().enumerate() {
            if i > 0 {
                self.buf.push(',');
            }
            push_str(&mut self.buf, k);
            self.buf.push(':');
            match *v {
                Arg::Int(n) => self.buf.push_str(&n.to_string()),
                Arg::UInt(n) => self.buf.push_str(&n.to_string()),
                Arg::Float(f) => push_f64(&mut self.buf, f, 6),
                Arg::Str(s) => push_str(&mut self.buf, s),
                Arg::Bool(b) => self.buf.push_str(if b { "true" } else { "false" }),
            }
        }
        self.buf.push('}');
    }

    fn end(&mut self) -> Result<(), Error> {
        self.buf.push('}');
        self.w.write_all(self.buf.as_bytes()).map_err(io_err)?;
        self.first = false;
        self.events += 1;
        Ok(())
    }

    /// A complete event (`ph:"X"`) from `start_ns` to `end_ns`
    /// (nanoseconds; `dur` is `end_ns - start_ns`, 0 when the end is not
    /// after the start).
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        name: &str,
        cat: &str,
        pid: u32,
        tid: u32,
        start_ns: u64,
        end_ns: u64,
        args: &[(&str, Arg<'_>)],
    ) -> Result<(), Error> {
        self.begin("X", name, pid, tid);
        self.cat(cat);
        self.ts("ts", start_ns);
        self.ts("dur", end_ns.saturating_sub(start_ns));
        self.args(args);
        self.end()
    }

    /// A duration-begin event (`ph:"B"`); close it with [`Self::end_event`].
    pub fn begin_event(
        &mut self,
        name: &str,
        cat: &str,
        pid: u32,
        tid: u32,
        ts_ns: u64,
    ) -> Result<(), Error> {
        self.begin("B", name, pid, tid);
        self.cat(cat);
        self.ts("ts", ts_ns);
        self.end()
    }

    /// A duration-end event (`ph:"E"`).
    pub fn end_event(&mut self, pid: u32, tid: u32, ts_ns: u64) -> Result<(), Error> {
        self.buf.clear();
        if !self.first {
            self.buf.push(',');
        }
        self.buf.push_str("\n{\"ph\":\"E\",\"pid\":");
        self.buf.push_str(&pid.to_string());
        self.buf.push_str(",\"tid\":");
        self.buf.push_str(&tid.to_string());
        self.ts("ts", ts_ns);
        self.end()
    }

    /// A counter event (`ph:"C"`): one track per `name`, one line per
    /// series.
    pub fn counter(
        &mut self,
        name: &str,
        pid: u32,
        ts_ns: u64,
        series: &[(&str, f64)],
    ) -> Result<(), Error> {
        self.begin("C", name, pid, 0);
        self.ts("ts", ts_ns);
        let args: Vec<(&str, Arg<'_>)> = series.iter().map(|&(k, v)| (k, Arg::Float(v))).collect();
        if args.is_empty() {
            self.buf.push_str(",\"args\":{}");
        } else {
            self.args(&args);
        }
        self.end()
    }

    /// An instant event (`ph:"i"`).
    #[allow(clippy::too_many_arguments)]
    pub fn instant(
        &mut self,
        name: &str,
        cat: &str,
        pid: u32,
        tid: u32,
        ts_ns: u64,
        scope: Scope,
        args: &[(&str, Arg<'_>)],
    ) -> Result<(), Error> {
        self.begin("i", name, pid, tid);
        self.cat(cat);
        self.ts("ts", ts_ns);
        self.buf.push_str(match scope {
            Scope::Thread => ",\"s\":\"t\"",
            Scope::Process => ",\"s\":\"p\"",
            Scope::Global => ",\"s\":\"g\"",
        });
        self.args(args);
        self.end()
    }

    /// Name a process (metadata `process_name`).
    pub fn process_name(&mut self, pid: u32, name: &str) -> Result<(), Error> {
        self.begin("M", "process_name", pid, 0);
        self.args(&[("name", Arg::Str(name))]);
        self.end()
    }

    /// Name a thread / track (metadata `thread_name`).
    pub fn thread_name(&mut self, pid: u32, tid: u32, name: &str) -> Result<(), Error> {
        self.begin("M", "thread_name", pid, tid);
        self.args(&[("name", Arg::Str(name))]);
        self.end()
    }

    /// Order threads in the viewer (metadata `thread_sort_index`).
    pub fn thread_sort_index(&mut self, pid: u32, tid: u32, index: i64) -> Result<(), Error> {
        self.begin("M", "thread_sort_index", pid, tid);
        self.args(&[("sort_index", Arg::Int(index))]);
        self.end()
    }

    /// Close the JSON (`],"displayTimeUnit":"ns"}`), flush, and give the
    /// inner writer back.
    pub fn finish(mut self) -> Result<W, Error> {
        self.w
            .write_all(b"\n],\"displayTimeUnit\":\"ns\"}\n")
            .map_err(io_err)?;
        self.w.flush().map_err(io_err)?;
        self.w
            .into_inner()
            .map_err(|e| io_err(std::io::Error::new(e.error().kind(), e.error().to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_is_valid_json_with_expected_events() {
        let mut t = TraceWriter::new(Vec::new()).unwrap();
        t.process_name(1, "Mega Drive").unwrap();
        t.thread_name(1, 1, "Main thread").unwrap();
        t.thread_sort_index(1, 1, 0).unwrap();
        t.complete(
            "VDP_waitVBlank",
            "cpu",
            1,
            1,
            12_500,
            15_750,
            &[("frame", Arg::UInt(7)), ("note", Arg::Str("a \"q\""))],
        )
        .unwrap();
        t.counter("load", 1, 16_000, &[("percent", 42.5)]).unwrap();
        t.instant("frame drop", "", 1, 1, 20_000, Scope::Process, &[])
            .unwrap();
        t.begin_event("vblank", "int", 1, 2, 30_000).unwrap();
        t.end_event(1, 2, 31_000).unwrap();
        assert_eq!(t.events(), 8);
        let bytes = t.finish().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["displayTimeUnit"], "ns");
        let ev = v["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len(), 8);
        assert_eq!(ev[0]["ph"], "M");
        assert_eq!(ev[0]["args"]["name"], "Mega Drive");
        assert_eq!(ev[3]["ph"], "X");
        assert_eq!(ev[3]["ts"], 12.5);
        assert_eq!(ev[3]["dur"], 3.25);
        assert_eq!(ev[3]["args"]["frame"], 7);
        assert_eq!(ev[3]["args"]["note"], "a \"q\"");
        assert_eq!(ev[4]["ph"], "C");
        assert_eq!(ev[4]["args"]["percent"], 42.5);
        assert_eq!(ev[5]["s"], "p");
        assert_eq!(ev[7]["ph"], "E");
        assert_eq!(ev[7]["ts"], 31);
    }

    #[test]
    fn times_are_exact_decimals_and_durations_come_from_integer_ends() {
        let mut t = TraceWriter::new(Vec::new()).unwrap();
        // 12.345 us to 16.000 us: dur is exactly 3.655 (not round(ts) +
        // round(dur) drifting past the next start).
        t.complete("a", "", 1, 1, 12_345, 16_000, &[]).unwrap();
        t.complete("b", "", 1, 1, 16_000, 16_001, &[]).unwrap();
        t.complete("empty", "", 1, 1, 5, 3, &[]).unwrap();
        let s = String::from_utf8(t.finish().unwrap()).unwrap();
        assert!(s.contains("\"ts\":12.345,\"dur\":3.655"), "{s}");
        assert!(s.contains("\"ts\":16,\"dur\":0.001"), "{s}");
        assert!(s.contains("\"ts\":0.005,\"dur\":0}"), "{s}");
    }

    #[test]
    fn grid_times_are_exact_in_doubles() {
        // NTSC master clock: one frame of 262 lines x 3,420 mclk.
        let hz = 53_693_175;
        assert_eq!(to_grid_ns(0, hz), 0);
        assert_eq!(to_grid_ns(7, hz) % EXACT_GRID_NS, 0);
        let mut last = 0;
        for f in 0..2_000u64 {
            let a = to_grid_ns(f * 896_040, hz);
            let b = to_grid_ns((f + 1) * 896_040, hz);
            assert!(a >= last && b >= a);
            last = a;
            // What Perfetto (ts * 1000 truncated) and speedscope (ts + dur
            // in doubles) compute from the written decimals.
            let (mut sa, mut sd) = (String::new(), String::new());
            push_us(&mut sa, a);
            push_us(&mut sd, b - a);
            let (ta, td): (f64, f64) = (sa.parse().unwrap(), sd.parse().unwrap());
            assert_eq!((ta * 1000.0) as u64, a);
            assert_eq!(((ta + td) * 1000.0) as u64, b);
            let mut sb = String::new();
            push_us(&mut sb, b);
            assert_eq!(ta + td, sb.parse::<f64>().unwrap());
        }
        // 16.683 ms per NTSC frame, to the grid.
        assert_eq!(to_grid_ns(896_040, hz), 16_688_125);
    }

    #[test]
    fn empty_trace_is_valid_json() {
        let t = TraceWriter::new(Vec::new()).unwrap();
        let bytes = t.finish().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["traceEvents"].as_array().unwrap().len(), 0);
    }
}
