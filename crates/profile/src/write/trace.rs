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
//! Timestamps and durations are in microseconds (the format's unit), written
//! with at most 3 decimals (nanosecond resolution) so output is
//! deterministic. Events are written as they are added, so a trace of any
//! length needs no memory; call [`TraceWriter::finish`] to close the JSON
//! (a trace that was not finished is not valid JSON, and
//! [`super::atomic`] will have thrown it away if the caller returned an
//! error).

use std::io::Write;

use super::io_err;
use super::json::{push_f64, push_str};
use crate::Error;

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

    fn ts(&mut self, key: &str, us: f64) {
        self.buf.push_str(",\"");
        self.buf.push_str(key);
        self.buf.push_str("\":");
        push_f64(&mut self.buf, us, 3);
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

    /// A complete event (`ph:"X"`): `ts_us` start, `dur_us` duration, both
    /// in microseconds.
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        name: &str,
        cat: &str,
        pid: u32,
        tid: u32,
        ts_us: f64,
        dur_us: f64,
        args: &[(&str, Arg<'_>)],
    ) -> Result<(), Error> {
        self.begin("X", name, pid, tid);
        self.cat(cat);
        self.ts("ts", ts_us);
        self.ts("dur", dur_us.max(0.0));
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
        ts_us: f64,
    ) -> Result<(), Error> {
        self.begin("B", name, pid, tid);
        self.cat(cat);
        self.ts("ts", ts_us);
        self.end()
    }

    /// A duration-end event (`ph:"E"`).
    pub fn end_event(&mut self, pid: u32, tid: u32, ts_us: f64) -> Result<(), Error> {
        self.buf.clear();
        if !self.first {
            self.buf.push(',');
        }
        self.buf.push_str("\n{\"ph\":\"E\",\"pid\":");
        self.buf.push_str(&pid.to_string());
        self.buf.push_str(",\"tid\":");
        self.buf.push_str(&tid.to_string());
        self.ts("ts", ts_us);
        self.end()
    }

    /// A counter event (`ph:"C"`): one track per `name`, one line per
    /// series.
    pub fn counter(
        &mut self,
        name: &str,
        pid: u32,
        ts_us: f64,
        series: &[(&str, f64)],
    ) -> Result<(), Error> {
        self.begin("C", name, pid, 0);
        self.ts("ts", ts_us);
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
        ts_us: f64,
        scope: Scope,
        args: &[(&str, Arg<'_>)],
    ) -> Result<(), Error> {
        self.begin("i", name, pid, tid);
        self.cat(cat);
        self.ts("ts", ts_us);
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
            12.5,
            3.25,
            &[("frame", Arg::UInt(7)), ("note", Arg::Str("a \"q\""))],
        )
        .unwrap();
        t.counter("load", 1, 16.0, &[("percent", 42.5)]).unwrap();
        t.instant("frame drop", "", 1, 1, 20.0, Scope::Process, &[])
            .unwrap();
        t.begin_event("vblank", "int", 1, 2, 30.0).unwrap();
        t.end_event(1, 2, 31.00049).unwrap();
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
    fn empty_trace_is_valid_json() {
        let t = TraceWriter::new(Vec::new()).unwrap();
        let bytes = t.finish().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["traceEvents"].as_array().unwrap().len(), 0);
    }
}
