//! CI gates on a [`Diff`]: each returns a message naming what tripped.

use crate::model::{Diff, Match};

/// A function regression must also exceed this share of all cycles (of
/// the base run), so that a 3-cycle helper doubling does not fail a build.
pub const FUNCTION_FLOOR_PCT_OF_ALL: f64 = 0.1;

/// Which gates are on.
#[derive(Clone, Debug, Default)]
pub struct Gates {
    /// Fail when the mean or the p99 load grew by more than this many
    /// percentage points.
    pub load_regression_pts: Option<f64>,
    /// Fail when a non-idle function's self cycles grew by more than this
    /// percentage and by more than [`FUNCTION_FLOOR_PCT_OF_ALL`] % of all
    /// cycles (a function new in this build counts as grown by infinity).
    pub function_regression_pct: Option<f64>,
    /// Fail when new has more dropped frames than base.
    pub new_drops: bool,
}

impl Gates {
    pub fn any(&self) -> bool {
        self.load_regression_pts.is_some()
            || self.function_regression_pct.is_some()
            || self.new_drops
    }
}

fn frames_list(v: &[u64]) -> String {
    let s: Vec<String> = v.iter().take(20).map(|f| f.to_string()).collect();
    if v.len() > 20 {
        format!("{} ... ({} in all)", s.join(" "), v.len())
    } else {
        s.join(" ")
    }
}

/// The gates that tripped (empty = pass), each a one-line message.
pub fn check(d: &Diff, g: &Gates) -> Vec<String> {
    let mut out = Vec::new();
    let s = &d.summary;
    if let Some(pts) = g.load_regression_pts {
        for (what, m) in [("mean", &s.mean_load_pct), ("p99", &s.p99_load_pct)] {
            if m.delta > pts {
                out.push(format!(
                    "load regression: {what} load grew by {:.2} points ({:.2}% -> {:.2}%), \
                     more than --fail-load-regression {pts}",
                    m.delta, m.base, m.new
                ));
            }
        }
    }
    if let Some(pct) = g.function_regression_pct {
        let all = if d.base.total_cycles > 0.0 {
            d.base.total_cycles
        } else {
            d.new.total_cycles
        };
        let floor = all * FUNCTION_FLOOR_PCT_OF_ALL / 100.0;
        let bad: Vec<String> = d
            .functions
            .iter()
            .filter(|f| !f.idle && f.self_cycles.delta > floor)
            .filter(|f| f.self_cycles.change_pct.is_none_or(|c| c > pct))
            .map(|f| {
                let how = match f.self_cycles.change_pct {
                    Some(c) => format!("+{c:.2}%"),
                    None if f.matched == Match::New => "new function".to_string(),
                    None => "from 0".to_string(),
                };
                format!(
                    "{} ({how}, {:.0} -> {:.0} self cycles)",
                    f.name, f.self_cycles.base, f.self_cycles.new
                )
            })
            .collect();
        if !bad.is_empty() {
            let n = bad.len();
            let shown: Vec<String> = bad.into_iter().take(10).collect();
            out.push(format!(
                "function regression: {n} function(s) grew by more than {pct}% and more than \
                 {FUNCTION_FLOOR_PCT_OF_ALL}% of all cycles ({floor:.0}): {}{}",
                shown.join(", "),
                if n > 10 { ", ..." } else { "" }
            ));
        }
    }
    if g.new_drops && s.dropped_frames.new > s.dropped_frames.base {
        out.push(format!(
            "new dropped frames: {} dropped frame(s), base had {}{}",
            s.dropped_frames.new,
            s.dropped_frames.base,
            if s.newly_dropped.is_empty() {
                String::new()
            } else {
                format!(
                    "; dropped now, not before: {}",
                    frames_list(&s.newly_dropped)
                )
            }
        ));
    }
    out
}
