//! A minimal protobuf decoder for tests that read back our own pprof files
//! (no schema: field number -> list of values; varint and length-delimited
//! wire types only, which is all `profile.proto` uses).

use std::collections::BTreeMap;

/// One value of a field.
#[derive(Debug, Clone)]
pub enum Val {
    Varint(u64),
    Bytes(Vec<u8>),
}

/// A decoded message: field number -> its values in order.
pub type Msg = BTreeMap<u64, Vec<Val>>;

/// The varint at `b[*pos..]`; `pos` moves past it.
pub fn varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*pos];
        *pos += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return v;
        }
        shift += 7;
        assert!(shift < 64, "varint too long");
    }
}

/// Decode one message (panics on a wire type profile.proto never uses).
pub fn decode(b: &[u8]) -> Msg {
    let mut out: Msg = BTreeMap::new();
    let mut pos = 0;
    while pos < b.len() {
        let key = varint(b, &mut pos);
        let (field, wire) = (key >> 3, key & 7);
        let v = match wire {
            0 => Val::Varint(varint(b, &mut pos)),
            2 => {
                let n = varint(b, &mut pos) as usize;
                let v = b[pos..pos + n].to_vec();
                pos += n;
                Val::Bytes(v)
            }
            w => panic!("unexpected wire type {w} for field {field}"),
        };
        out.entry(field).or_default().push(v);
    }
    out
}

/// The last value of varint field `f` (0 when absent, as protobuf says).
pub fn get_u(m: &Msg, f: u64) -> u64 {
    match m.get(&f).and_then(|v| v.last()) {
        Some(Val::Varint(x)) => *x,
        None => 0,
        Some(v) => panic!("field {f} is not a varint: {v:?}"),
    }
}

/// Every value of message field `f`, decoded.
pub fn msgs(m: &Msg, f: u64) -> Vec<Msg> {
    m.get(&f)
        .map(|v| {
            v.iter()
                .map(|x| match x {
                    Val::Bytes(b) => decode(b),
                    v => panic!("field {f} is not a message: {v:?}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Repeated varint field `f`, packed or not.
pub fn packed(m: &Msg, f: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for v in m.get(&f).into_iter().flatten() {
        match v {
            Val::Bytes(b) => {
                let mut pos = 0;
                while pos < b.len() {
                    out.push(varint(b, &mut pos));
                }
            }
            Val::Varint(x) => out.push(*x),
        }
    }
    out
}
