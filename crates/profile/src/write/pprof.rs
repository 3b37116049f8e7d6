//! pprof `profile.proto`, gzip-compressed, with a small hand-written
//! protobuf encoder.
//!
//! Field numbers follow `proto/profile.proto` of github.com/google/pprof:
//! Profile { 1 sample_type, 2 sample, 3 mapping, 4 location, 5 function,
//! 6 string_table, 10 duration_nanos, 11 period_type, 12 period, 13 comment,
//! 14 default_sample_type }, ValueType { 1 type, 2 unit },
//! Sample { 1 location_id (packed), 2 value (packed) },
//! Mapping { 1 id, 2 memory_start, 3 memory_limit, 5 filename,
//! 7 has_functions, 8 has_filenames, 9 has_line_numbers, 10 has_inline_frames },
//! Location { 1 id, 2 mapping_id, 3 address, 4 line },
//! Line { 1 function_id, 2 line }, Function { 1 id, 2 name, 3 system_name,
//! 4 filename }.

use std::collections::BTreeMap;
use std::io::Write;

use super::hash::FastMap;
use super::{io_err, validate};
use crate::{Error, StackProfile, ValueType};

/// Optional extras for [`super::pprof_with`].
#[derive(Clone, Debug, Default)]
pub struct PprofOptions {
    /// `period_type` and `period` (e.g. one sample every N cycles);
    /// `None`: the default value type with period 1 (every unit counted).
    pub period: Option<(ValueType, i64)>,
    /// `duration_nanos` of the profiled run.
    pub duration_nanos: Option<i64>,
    /// Free-text comments shown by `pprof -comments`.
    pub comments: Vec<String>,
}

// ---- protobuf encoding -------------------------------------------------

const WIRE_VARINT: u64 = 0;
const WIRE_LEN: u64 = 2;

#[derive(Default)]
struct Msg {
    buf: Vec<u8>,
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

impl Msg {
    fn key(&mut self, field: u64, wire: u64) {
        put_varint(&mut self.buf, (field << 3) | wire);
    }
    /// A varint field (uint64/int64/bool); zero values are omitted, as proto3
    /// does for scalars.
    fn uint(&mut self, field: u64, v: u64) {
        if v != 0 {
            self.key(field, WIRE_VARINT);
            put_varint(&mut self.buf, v);
        }
    }
    fn int(&mut self, field: u64, v: i64) {
        // int64 is encoded as the two's-complement u64 (not zig-zag).
        self.uint(field, v as u64);
    }
    fn bytes(&mut self, field: u64, b: &[u8]) {
        self.key(field, WIRE_LEN);
        put_varint(&mut self.buf, b.len() as u64);
        self.buf.extend_from_slice(b);
    }
    fn msg(&mut self, field: u64, m: &Msg) {
        self.bytes(field, &m.buf);
    }
    /// A packed repeated varint field; `scratch` is a reusable buffer.
    fn packed_uint(&mut self, field: u64, vs: impl Iterator<Item = u64>, scratch: &mut Vec<u8>) {
        scratch.clear();
        for v in vs {
            put_varint(scratch, v);
        }
        if !scratch.is_empty() {
            self.bytes(field, scratch);
        }
    }
}

/// String table with entry 0 = "".
struct Strings {
    table: Vec<String>,
    index: BTreeMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings {
            table: Vec::new(),
            index: BTreeMap::new(),
        };
        s.get("");
        s
    }
    fn get(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

fn value_type(strings: &mut Strings, vt: &ValueType) -> Msg {
    let mut m = Msg::default();
    m.int(1, strings.get(&vt.kind));
    m.int(2, strings.get(&vt.unit));
    m
}

/// Split a root-first stack into physical frames with their inline chains:
/// each group is a root-first sub-slice `[physical, inlined, inlined...]`.
fn groups<'a>(stack: &'a [u32], p: &StackProfile, out: &mut Vec<&'a [u32]>) {
    out.clear();
    let mut start = 0;
    for (i, &f) in stack.iter().enumerate() {
        if i > start && !p.frames[f as usize].inlined {
            out.push(&stack[start..i]);
            start = i;
        }
    }
    if start < stack.len() {
        out.push(&stack[start..]);
    }
}

/// String labels of sample `i` (pprof `Sample.label`, field 3: `Label { 1
/// key, 2 str }`), by sample index; samples past the end have none.
pub(crate) type SampleLabels<'a> = &'a [Vec<(String, String)>];

pub(crate) fn encode(
    p: &StackProfile,
    opts: &PprofOptions,
    labels: SampleLabels,
) -> Result<Vec<u8>, Error> {
    validate(p, None)?;
    if labels.len() > p.samples.len() {
        return Err(Error::Invalid(format!(
            "{} sample label lists for {} samples",
            labels.len(),
            p.samples.len()
        )));
    }
    if p.value_types.is_empty() {
        return Err(Error::Invalid(
            "a pprof profile needs at least one value type".to_string(),
        ));
    }
    let mut strings = Strings::new();
    let mut prof = Msg::default();

    for vt in &p.value_types {
        let m = value_type(&mut strings, vt);
        prof.msg(1, &m);
    }

    // Functions keyed by (name, file), ids in order of first use.
    let mut functions: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut function_order: Vec<(String, String)> = Vec::new();
    let mut frame_function: Vec<u64> = Vec::with_capacity(p.frames.len());
    for f in &p.frames {
        let key = (f.name.clone(), f.file.clone().unwrap_or_default());
        let next = functions.len() as u64 + 1;
        let id = *functions.entry(key.clone()).or_insert_with(|| {
            function_order.push(key);
            next
        });
        frame_function.push(id);
    }

    // Locations keyed by the root-first chain of frame indices; ids in
    // order of first use (the map is only for look-ups).
    let mut locations: FastMap<&[u32], u64> = FastMap::default();
    let mut location_order: Vec<&[u32]> = Vec::new();
    let mut samples = Msg::default();
    let mut loc_ids: Vec<u64> = Vec::new();
    let mut chains: Vec<&[u32]> = Vec::new();
    let mut m = Msg::default();
    let mut scratch = Vec::new();
    for (si, s) in p.samples.iter().enumerate() {
        loc_ids.clear();
        groups(&s.stack, p, &mut chains);
        for &g in &chains {
            let next = locations.len() as u64 + 1;
            let id = *locations.entry(g).or_insert_with(|| {
                location_order.push(g);
                next
            });
            loc_ids.push(id);
        }
        loc_ids.reverse(); // pprof: leaf first
        m.buf.clear();
        m.packed_uint(1, loc_ids.iter().copied(), &mut scratch);
        m.packed_uint(2, s.values.iter().map(|&v| v as u64), &mut scratch);
        for (k, v) in labels.get(si).map_or(&[][..], |l| &l[..]) {
            let mut label = Msg::default();
            label.int(1, strings.get(k));
            label.int(2, strings.get(v));
            m.msg(3, &label);
        }
        samples.msg(2, &m);
    }
    prof.buf.extend_from_slice(&samples.buf);

    // One mapping covering every address, so viewers do not try to
    // symbolise the (already symbolised) locations.
    let max_addr = p.frames.iter().filter_map(|f| f.addr).max().unwrap_or(0);
    let any_file = p.frames.iter().any(|f| f.file.is_some());
    let any_line = p.frames.iter().any(|f| f.line.is_some());
    let any_inline = p.frames.iter().any(|f| f.inlined);
    let mut mapping = Msg::default();
    mapping.uint(1, 1);
    mapping.uint(2, 0);
    mapping.uint(3, max_addr.saturating_add(1));
    mapping.int(5, strings.get(&p.name));
    mapping.uint(7, 1);
    mapping.uint(8, any_file as u64);
    mapping.uint(9, any_line as u64);
    mapping.uint(10, any_inline as u64);
    prof.msg(3, &mapping);

    for (i, chain) in location_order.iter().enumerate() {
        let mut loc = Msg::default();
        loc.uint(1, i as u64 + 1);
        loc.uint(2, 1);
        let physical = &p.frames[chain[0] as usize];
        loc.uint(3, physical.addr.unwrap_or(0));
        // Lines innermost first; the last one is the physical function.
        for &f in chain.iter().rev() {
            let mut line = Msg::default();
            line.uint(1, frame_function[f as usize]);
            line.int(2, p.frames[f as usize].line.unwrap_or(0) as i64);
            loc.msg(4, &line);
        }
        prof.msg(4, &loc);
    }

    for (i, (name, file)) in function_order.iter().enumerate() {
        let mut func = Msg::default();
        func.uint(1, i as u64 + 1);
        let n = strings.get(name);
        func.int(2, n);
        func.int(3, n);
        func.int(4, strings.get(file));
        prof.msg(5, &func);
    }

    // Strings used only by the trailer fields must be interned before the
    // table is written.
    // Without an explicit period, every unit of the default value type is
    // counted (an exact profile, not a sampled one): period 1 of that type,
    // so `pprof -raw` shows a PeriodType rather than an empty one.
    let default_type = &p.value_types[p.default_value];
    let period = Some(match &opts.period {
        Some((vt, n)) => (value_type(&mut strings, vt), *n),
        None => (value_type(&mut strings, default_type), 1),
    });
    let comments: Vec<i64> = opts.comments.iter().map(|c| strings.get(c)).collect();

    for s in &strings.table {
        prof.bytes(6, s.as_bytes());
    }
    if let Some(d) = opts.duration_nanos {
        prof.int(10, d);
    }
    if let Some((vt, n)) = &period {
        prof.msg(11, vt);
        prof.int(12, *n);
    }
    for c in comments {
        prof.int(13, c);
    }
    let idx = strings.index[&default_type.kind];
    prof.int(14, idx);
    Ok(prof.buf)
}

pub(crate) fn write<W: Write>(
    p: &StackProfile,
    opts: &PprofOptions,
    labels: SampleLabels,
    w: W,
) -> Result<(), Error> {
    let raw = encode(p, opts, labels)?;
    // GzBuilder writes mtime 0 and no file name: deterministic bytes.
    let mut gz = flate2::GzBuilder::new().write(w, flate2::Compression::default());
    gz.write_all(&raw).map_err(io_err)?;
    let mut w = gz.finish().map_err(io_err)?;
    w.flush().map_err(io_err)?;
    Ok(())
}
