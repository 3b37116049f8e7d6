//! Folded stacks (`root;mid;leaf VALUE`).

use std::collections::BTreeMap;
use std::io::Write;

use super::hash::FastMap;
use super::{frame_label, io_err, validate};
use crate::{Error, StackProfile};

/// Options for [`super::folded_with`].
#[derive(Clone, Debug, Default)]
pub struct FoldedOptions {
    /// Append ` (file:line)` to frames that have a source location.
    pub with_location: bool,
}

/// Merge the samples into folded lines (label path -> summed value), sorted
/// by the path's bytes.
pub(crate) fn fold(
    p: &StackProfile,
    value_index: usize,
    with_location: bool,
) -> Result<BTreeMap<String, i64>, Error> {
    validate(p, Some(value_index))?;
    // Merge identical frame-index stacks first (hashing only to build; the
    // output order comes from the BTreeMap below), then render each
    // distinct stack once.
    let mut stacks: FastMap<&[u32], i64> = FastMap::default();
    for s in &p.samples {
        let v = s.values[value_index];
        if v == 0 {
            continue;
        }
        let total = stacks.entry(s.stack.as_slice()).or_insert(0);
        *total = total.saturating_add(v);
    }
    let labels: Vec<String> = p
        .frames
        .iter()
        .map(|f| frame_label(f, with_location))
        .collect();
    let mut lines: BTreeMap<String, i64> = BTreeMap::new();
    for (stack, v) in stacks {
        let mut key = String::with_capacity(stack.len() * 16);
        if stack.is_empty() {
            key.push_str("[no stack]");
        }
        for (i, &f) in stack.iter().enumerate() {
            if i > 0 {
                key.push(';');
            }
            key.push_str(&labels[f as usize]);
        }
        // Different frames can share a label (same name, other file).
        let total = lines.entry(key).or_insert(0);
        *total = total.saturating_add(v);
    }
    lines.retain(|_, v| *v != 0);
    Ok(lines)
}

pub(crate) fn write<W: Write>(
    p: &StackProfile,
    value_index: usize,
    opts: &FoldedOptions,
    w: W,
) -> Result<(), Error> {
    let lines = fold(p, value_index, opts.with_location)?;
    let mut w = std::io::BufWriter::new(w);
    for (stack, v) in &lines {
        writeln!(w, "{stack} {v}").map_err(io_err)?;
    }
    w.flush().map_err(io_err)?;
    Ok(())
}
