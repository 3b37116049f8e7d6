//! The two reports' call stacks side by side: a differential flame graph
//! and a pprof profile with `-diff_base` semantics.
//!
//! Stacks are the reports' `stacks` (whole run, master clocks rounded to
//! 68000 cycles as `profile --folded` does). Base function names are
//! mapped to their new names first, so a compiler clone that only changed
//! its suffix lines up with itself.

use std::collections::BTreeMap;
use std::io::Write;

use retroprof_mdprof::report::Report;
use retroprof_megadrive::timing::M68K_DIVIDER;
use retroprof_profile::write as pw;
use retroprof_profile::{Error, Frame, Sample, StackProfile, ValueType};

use crate::model::Diff;

/// Label pprof puts on the (negated) base samples of a `-diff_base`
/// comparison; percentages are then relative to the base's total.
pub const PPROF_BASE_LABEL: (&str, &str) = ("pprof::base", "true");

/// Root-first name stacks with their cycles, merged, in stack order.
fn named_stacks(r: &Report, rename: &BTreeMap<&str, &str>) -> BTreeMap<Vec<String>, i64> {
    let mut m: BTreeMap<Vec<String>, i64> = BTreeMap::new();
    for s in &r.stacks {
        // As `profile --folded` (mdprof output.rs): master clocks / 7
        // (`timing::M68K_DIVIDER`), rounded to nearest.
        let c =
            (s.mclk.saturating_add(M68K_DIVIDER / 2) / M68K_DIVIDER).min(i64::MAX as u64) as i64;
        if c <= 0 {
            continue;
        }
        let names = s
            .stack
            .iter()
            .map(|&i| {
                let n = r.functions[i].name.as_str();
                rename.get(n).copied().unwrap_or(n).to_string()
            })
            .collect();
        *m.entry(names).or_insert(0) += c;
    }
    m
}

/// One profile with two values per stack: `base_cycles` (index 0) and
/// `cycles` (index 1, the default). Frames carry the new build's address
/// and source location where the function exists there.
pub fn two_value_profile(base: &Report, new: &Report, d: &Diff) -> StackProfile {
    let rename: BTreeMap<&str, &str> = d
        .functions
        .iter()
        .filter_map(|f| f.base_name.as_deref().map(|b| (b, f.name.as_str())))
        .collect();
    let none = BTreeMap::new();
    let bs = named_stacks(base, &rename);
    let ns = named_stacks(new, &none);
    let mut merged: BTreeMap<Vec<String>, (i64, i64)> = BTreeMap::new();
    for (k, v) in bs {
        merged.entry(k).or_default().0 += v;
    }
    for (k, v) in ns {
        merged.entry(k).or_default().1 += v;
    }
    // Frame table: every name, new's details first.
    let mut frames: Vec<Frame> = Vec::new();
    let mut index: BTreeMap<String, u32> = BTreeMap::new();
    let details = |name: &str| {
        new.functions
            .iter()
            .find(|f| f.name == name)
            .or_else(|| base.functions.iter().find(|f| f.name == name))
    };
    let mut samples = Vec::with_capacity(merged.len());
    for (names, (b, n)) in merged {
        let mut stack = Vec::with_capacity(names.len());
        for name in names {
            let i = match index.get(&name) {
                Some(&i) => i,
                None => {
                    let f = details(&name);
                    frames.push(Frame {
                        name: name.clone(),
                        addr: f.map(|f| f.addr as u64),
                        file: f.and_then(|f| f.file.clone()),
                        line: f.and_then(|f| f.line),
                        module: None,
                        inlined: false,
                    });
                    let i = (frames.len() - 1) as u32;
                    index.insert(name, i);
                    i
                }
            };
            stack.push(i);
        }
        samples.push(Sample {
            stack,
            values: vec![b, n],
        });
    }
    StackProfile {
        name: format!("{} -> {}", d.base.label, d.new.label),
        value_types: vec![
            ValueType {
                kind: "base_cycles".into(),
                unit: "cycles".into(),
            },
            ValueType {
                kind: "cycles".into(),
                unit: "cycles".into(),
            },
        ],
        default_value: 1,
        frames,
        samples,
    }
}

/// Differential flame graph SVG: width = new cycles, colour = change in
/// self cycles (red grew, blue shrank), see
/// [`retroprof_profile::write::flamegraph_diff_svg`].
pub fn flamegraph(base: &Report, new: &Report, d: &Diff, w: &mut dyn Write) -> Result<(), Error> {
    let p = two_value_profile(base, new, d);
    let opts = pw::FlameGraphOptions {
        subtitle: Some(format!(
            "width = {} (new), colour = change in self cycles from {} (base): red grew, blue shrank",
            d.new.label, d.base.label
        )),
        ..pw::FlameGraphOptions::default()
    };
    let title = "retroprof diff - 68000 cycles";
    pw::flamegraph_diff_svg(&p, 0, 1, title, &opts, w)
}

/// The comparison as ONE pprof profile, the profile `go tool pprof
/// -diff_base=BASE NEW` builds internally: value type `cycles`, the new
/// stacks with their cycles, the base stacks with negated cycles and the
/// label `pprof::base=true`. `go tool pprof -top FILE` (or `-http`) then
/// shows the change per function, percentages relative to the base total,
/// exactly as `-diff_base` would.
pub fn diff_pprof_profile(
    base: &Report,
    new: &Report,
    d: &Diff,
) -> (StackProfile, Vec<Vec<(String, String)>>) {
    let two = two_value_profile(base, new, d);
    let mut samples = Vec::new();
    let mut labels = Vec::new();
    for s in &two.samples {
        if s.values[1] != 0 {
            samples.push(Sample {
                stack: s.stack.clone(),
                values: vec![s.values[1]],
            });
            labels.push(Vec::new());
        }
    }
    for s in &two.samples {
        if s.values[0] != 0 {
            samples.push(Sample {
                stack: s.stack.clone(),
                values: vec![-s.values[0]],
            });
            labels.push(vec![(
                PPROF_BASE_LABEL.0.to_string(),
                PPROF_BASE_LABEL.1.to_string(),
            )]);
        }
    }
    let p = StackProfile {
        name: two.name,
        value_types: vec![ValueType {
            kind: "cycles".into(),
            unit: "cycles".into(),
        }],
        default_value: 0,
        frames: two.frames,
        samples,
    };
    (p, labels)
}

/// Write [`diff_pprof_profile`] (gzip-compressed `profile.proto`).
pub fn pprof(base: &Report, new: &Report, d: &Diff, w: &mut dyn Write) -> Result<(), Error> {
    let (p, labels) = diff_pprof_profile(base, new, d);
    let opts = pw::PprofOptions {
        comments: vec![format!(
            "retroprof diff: {} (base, negated, label pprof::base=true) -> {} (new)",
            d.base.label, d.new.label
        )],
        ..pw::PprofOptions::default()
    };
    pw::pprof_labelled(&p, &opts, &labels, w)
}
