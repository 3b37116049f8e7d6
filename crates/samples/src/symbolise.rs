//! Matching a histogram against a map: per-function and per-module counts.

use std::collections::BTreeMap;

use retroprof_symbols::maps::MapFile;
use retroprof_symbols::{Symbol, SymbolKind};

use crate::histogram::{Histogram, SATURATED};

/// Options for [`symbolise`].
#[derive(Clone, Debug)]
pub struct SymboliseOptions {
    /// Name of the profiled program (for the report and profile writers).
    pub name: String,
    /// How many hottest addresses to list.
    pub hot_addresses: usize,
    /// The linear range the profiler could see (e.g. the 64 KiB of the code
    /// segment a Petit histogram covers); samples outside it are reported as
    /// outside the code segment.
    pub window: Option<(u64, u64)>,
    /// Name of the code segment the histogram was taken in, for messages.
    pub segment_name: Option<String>,
}

impl Default for SymboliseOptions {
    fn default() -> Self {
        SymboliseOptions {
            name: "program".into(),
            hot_addresses: 20,
            window: None,
            segment_name: None,
        }
    }
}

/// Samples attributed to one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionStat {
    pub name: String,
    /// Other names at the same address.
    pub aliases: Vec<String>,
    pub addr: u64,
    /// Exclusive end of the range attributed to it (`None`: unbounded).
    pub end: Option<u64>,
    pub module: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub samples: u64,
    /// Buckets at the saturated counter value inside this function.
    pub saturated_buckets: u64,
}

/// Samples per module (object file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleStat {
    pub name: String,
    pub samples: u64,
}

/// Why samples were not attributed to a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnattributedKind {
    /// At an address in no code segment of the map (or outside the window).
    OutsideCode,
    /// In code, but not inside any code symbol.
    NoSymbol,
    /// Counted by the profiler outside the program (PROFIL `hit_dos`, ...).
    External,
    /// After a symbol that an unreadable map line follows, beyond what is
    /// known to be that symbol's: the unreadable line may have been another
    /// symbol (issue 21).
    UnreadableMapLine,
}

impl UnattributedKind {
    pub fn label(self) -> &'static str {
        match self {
            UnattributedKind::OutsideCode => "[outside code segment]",
            UnattributedKind::NoSymbol => "[no symbol]",
            UnattributedKind::External => "[outside program]",
            UnattributedKind::UnreadableMapLine => "[after an unreadable map line]",
        }
    }
}

/// A group of samples that no function got, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unattributed {
    pub kind: UnattributedKind,
    /// Short label (`[no symbol]`, `[DOS]`, ...).
    pub what: String,
    pub samples: u64,
    pub explanation: String,
}

/// One of the hottest addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HotAddress {
    pub addr: u64,
    pub samples: u64,
    /// `function+0xOFF`, or the unattributed label.
    pub location: String,
    /// `file:line` when the map has line numbers for this address.
    pub source: Option<String>,
}

/// A symbolised histogram.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleProfile {
    pub name: String,
    /// Every sample, including unattributed ones.
    pub total: u64,
    /// Samples attributed to a function.
    pub attributed: u64,
    pub bucket_bytes: u64,
    /// By samples, descending (ties: address, then name). Only functions
    /// with samples.
    pub functions: Vec<FunctionStat>,
    /// Present when the map gives modules; by samples, descending.
    pub modules: Vec<ModuleStat>,
    pub hot: Vec<HotAddress>,
    pub unattributed: Vec<Unattributed>,
    pub warnings: Vec<String>,
}

impl SampleProfile {
    /// `samples` as a fraction of every sample (0 when there are none).
    pub fn share_of_all(&self, samples: u64) -> f64 {
        ratio(samples, self.total)
    }

    /// `samples` as a fraction of the attributed samples.
    pub fn share_of_attributed(&self, samples: u64) -> f64 {
        ratio(samples, self.attributed)
    }

    /// Compare the sampled share (of all samples) of function `name` with
    /// an exact share (e.g. its fraction of cycles from the emulator's cycle
    /// profile). A function with no samples has sampled share 0. The
    /// standard error is taken from the exact share (the null hypothesis).
    pub fn compare_share(&self, name: &str, exact_share: f64) -> ShareCheck {
        let samples = self.function(name).map(|f| f.samples).unwrap_or(0);
        let sampled = self.share_of_all(samples);
        let std_error = binomial_standard_error_of(exact_share, self.total);
        let z = if std_error > 0.0 {
            (sampled - exact_share) / std_error
        } else if (sampled - exact_share).abs() < f64::EPSILON {
            0.0
        } else {
            f64::INFINITY
        };
        ShareCheck {
            sampled,
            exact: exact_share,
            std_error,
            z,
        }
    }

    /// The function row called `name`.
    pub fn function(&self, name: &str) -> Option<&FunctionStat> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// A sampled share against an exact one ([`SampleProfile::compare_share`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareCheck {
    pub sampled: f64,
    pub exact: f64,
    /// Binomial standard error of the sampled share if the exact share is
    /// the truth: `sqrt(exact (1 - exact) / total)`.
    pub std_error: f64,
    /// `(sampled - exact) / std_error`: within ±3 is agreement at 99.7 %.
    pub z: f64,
}

impl ShareCheck {
    /// True when the shares agree within `z_max` standard errors.
    pub fn agrees(&self, z_max: f64) -> bool {
        self.z.abs() <= z_max
    }
}

fn ratio(k: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        k as f64 / n as f64
    }
}

/// Binomial standard error of a share estimated from `k` of `n` samples:
/// `sqrt(p (1 - p) / n)` with `p = k / n` (0 when `n` is 0).
///
/// A sampled share `p` and an exact share `q` (e.g. from cycle counts)
/// agree within `z` standard errors when `|p - q| <= z * se`, where `se` is
/// best computed from the exact share: [`binomial_standard_error_of`].
pub fn binomial_standard_error(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    binomial_standard_error_of(k as f64 / n as f64, n)
}

/// Standard error of the share of `n` independent samples that land in a
/// region whose true share is `p`: `sqrt(p (1 - p) / n)`.
pub fn binomial_standard_error_of(p: f64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let p = p.clamp(0.0, 1.0);
    (p * (1.0 - p) / n as f64).sqrt()
}

/// Errors from [`symbolise`] (bad input, for the CLI's exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum SymboliseError {
    #[error(
        "the map has no code symbols ({count} symbols, none of them code{why}); \
         nothing to attribute samples to"
    )]
    NoCodeSymbols { count: usize, why: String },
}

struct Func<'a> {
    sym: &'a Symbol,
    aliases: Vec<String>,
    end: u64,
    /// Set when an unreadable map line follows this symbol: (line, the end
    /// the next readable symbol would have given). `[end, that)` is not
    /// known to be this function's.
    cut: Option<(usize, u64)>,
}

/// Functions: the code symbols by address, aliases at one address folded
/// (global names first, then by name), each ending at the next one, at its
/// own size, or at the end of its code segment, whichever comes first.
fn functions(map: &MapFile) -> Vec<Func<'_>> {
    let syms: Vec<&Symbol> = map
        .symbols
        .symbols()
        .iter()
        .filter(|s| s.kind == SymbolKind::Text)
        .collect();
    let mut out: Vec<Func> = Vec::new();
    let mut i = 0;
    while i < syms.len() {
        let mut j = i;
        while j < syms.len() && syms[j].addr == syms[i].addr {
            j += 1;
        }
        let mut group: Vec<&Symbol> = syms[i..j].to_vec();
        group.sort_by(|a, b| {
            (!a.global, a.name.starts_with('.'), &a.name).cmp(&(
                !b.global,
                b.name.starts_with('.'),
                &b.name,
            ))
        });
        let sym = group[0];
        let aliases = group[1..].iter().map(|s| s.name.clone()).collect();
        let next = syms.get(j).map(|s| s.addr).unwrap_or(u64::MAX);
        let mut end = next;
        if let Some(size) = group.iter().filter_map(|s| s.size).filter(|&s| s > 0).max() {
            end = end.min(sym.addr.saturating_add(size));
        }
        if let Some(seg) = map
            .segments
            .iter()
            .filter(|s| s.code && s.contains(sym.addr))
            .min_by_key(|s| s.start)
        {
            end = end.min(seg.end());
        }
        out.push(Func {
            sym,
            aliases,
            end,
            cut: None,
        });
        i = j;
    }
    // Never extend a function across a map line that could not be read
    // (issue 21): it ends at its known size, or at its own address plus one.
    for u in &map.unreadable {
        let Some(after) = u.after else { continue };
        let k = out.partition_point(|f| f.sym.addr <= after);
        let Some(f) = k.checked_sub(1).map(|k| &mut out[k]) else {
            continue;
        };
        if f.cut.is_some() {
            continue;
        }
        let known = match f.sym.size.filter(|&s| s > 0) {
            Some(size) => f.sym.addr.saturating_add(size),
            None => f.sym.addr.saturating_add(1),
        };
        if known < f.end {
            f.cut = Some((u.line, f.end));
            f.end = known;
        }
    }
    out
}

/// The first source line inside function `f`.
fn first_line<'a>(
    map: &'a MapFile,
    f: &Func<'_>,
) -> Option<&'a retroprof_symbols::maps::LineEntry> {
    let i = map.lines.partition_point(|l| l.addr < f.sym.addr);
    map.lines.get(i).filter(|l| l.addr < f.end)
}

/// Attribute every sample of `hist` to a function of `map`.
pub fn symbolise(
    hist: &Histogram,
    map: &MapFile,
    opts: &SymboliseOptions,
) -> Result<SampleProfile, SymboliseError> {
    let funcs = functions(map);
    if funcs.is_empty() {
        let count = map.symbols.len();
        let why = if count > 0 && !map.segments.is_empty() {
            let codes: Vec<&str> = map.code_segments().map(|s| s.name.as_str()).collect();
            if codes.is_empty() {
                format!(
                    "; no segment of the map has a CODE class ({} segments)",
                    map.segments.len()
                )
            } else {
                format!("; code segments: {}", codes.join(", "))
            }
        } else {
            String::new()
        };
        return Err(SymboliseError::NoCodeSymbols { count, why });
    }
    let has_code_segments = map.code_segments().next().is_some();
    let mut per_func = vec![0u64; funcs.len()];
    let mut sat_func = vec![0u64; funcs.len()];
    let mut outside = 0u64;
    let mut outside_examples: Vec<(u64, u64)> = Vec::new();
    let mut nosym = 0u64;
    let mut nosym_before = 0u64;
    let mod_index = ModuleIndex::new(map);
    let mut per_module = vec![0u64; mod_index.names.len()];
    // Samples in code with no module range, by the function's own module.
    let mut by_symbol_module: BTreeMap<String, u64> = BTreeMap::new();
    let mut no_module = 0u64;
    let mut straddle = 0u64;
    let has_modules =
        !map.modules.is_empty() || map.symbols.symbols().iter().any(|s| s.module.is_some());
    // (samples, address, function index or NONE/OUTSIDE): labels are made
    // only for the hottest few.
    const OUTSIDE: usize = usize::MAX;
    const NONE: usize = usize::MAX - 1;
    const UNREADABLE: usize = usize::MAX - 2;
    // Samples after an unreadable map line: by line, (samples, function).
    let mut unreadable: BTreeMap<usize, (u64, usize)> = BTreeMap::new();
    let mut hot: Vec<(u64, u64, usize)> = Vec::with_capacity(hist.counts.len());
    let sat: std::collections::BTreeSet<u64> = hist.saturated.iter().copied().collect();
    let code_segments: Vec<(u64, u64)> = map.code_segments().map(|s| (s.start, s.end())).collect();
    for (&addr, &n) in &hist.counts {
        let in_window = opts
            .window
            .map(|(a, b)| addr >= a && addr < b)
            .unwrap_or(true);
        let in_code =
            !has_code_segments || code_segments.iter().any(|&(a, b)| addr >= a && addr < b);
        if !in_window || !in_code {
            outside = outside.saturating_add(n);
            outside_examples.push((n, addr));
            hot.push((n, addr, OUTSIDE));
            continue;
        }
        let idx = funcs.partition_point(|f| f.sym.addr <= addr);
        let f = idx.checked_sub(1).filter(|&k| addr < funcs[k].end);
        if has_modules {
            match mod_index.lookup(addr) {
                Some(m) => per_module[m] = per_module[m].saturating_add(n),
                None => match f.and_then(|k| funcs[k].sym.module.as_ref()) {
                    Some(name) => {
                        let c = by_symbol_module.entry(name.clone()).or_insert(0);
                        *c = c.saturating_add(n);
                    }
                    None => no_module = no_module.saturating_add(n),
                },
            }
        }
        match f {
            Some(k) => {
                per_func[k] = per_func[k].saturating_add(n);
                if sat.contains(&addr) {
                    sat_func[k] += 1;
                }
                let bucket_end = addr.saturating_add(hist.bucket_bytes);
                if hist.bucket_bytes > 1
                    && (bucket_end > funcs[k].end
                        || funcs
                            .get(k + 1)
                            .map(|g| g.sym.addr < bucket_end)
                            .unwrap_or(false))
                {
                    straddle = straddle.saturating_add(n);
                }
                hot.push((n, addr, k));
            }
            None if idx > 0 && funcs[idx - 1].cut.is_some_and(|(_, e)| addr < e) => {
                let line = funcs[idx - 1].cut.map(|c| c.0).unwrap_or(0);
                let c = unreadable.entry(line).or_insert((0, idx - 1));
                c.0 = c.0.saturating_add(n);
                hot.push((n, addr, UNREADABLE));
            }
            None => {
                nosym = nosym.saturating_add(n);
                if idx == 0 {
                    nosym_before = nosym_before.saturating_add(n);
                }
                hot.push((n, addr, NONE));
            }
        }
    }
    let mut modules: BTreeMap<String, u64> = by_symbol_module;
    for (i, &n) in per_module.iter().enumerate() {
        if n > 0 {
            let c = modules.entry(mod_index.names[i].clone()).or_insert(0);
            *c = c.saturating_add(n);
        }
    }
    if no_module > 0 {
        let c = modules.entry("[no module]".into()).or_insert(0);
        *c = c.saturating_add(no_module);
    }
    let placed = hist.placed();
    let external = hist
        .external
        .iter()
        .fold(0u64, |t, e| t.saturating_add(e.samples));
    let total = placed.saturating_add(external);
    let attributed = per_func.iter().fold(0u64, |t, &n| t.saturating_add(n));

    let mut functions: Vec<FunctionStat> = funcs
        .iter()
        .zip(per_func.iter().zip(&sat_func))
        .filter(|(_, (&n, _))| n > 0)
        .map(|(f, (&n, &s))| FunctionStat {
            name: f.sym.name.clone(),
            aliases: f.aliases.clone(),
            addr: f.sym.addr,
            end: (f.end != u64::MAX).then_some(f.end),
            module: f.sym.module.clone().or_else(|| {
                map.modules
                    .iter()
                    .filter(|m| f.sym.addr >= m.start && f.sym.addr < m.end())
                    .min_by_key(|m| (!m.code, m.len, m.start))
                    .map(|m| m.name.clone())
            }),
            file: f
                .sym
                .file
                .clone()
                .or_else(|| first_line(map, f).map(|l| l.file.clone())),
            line: f.sym.line.or_else(|| first_line(map, f).map(|l| l.line)),
            samples: n,
            saturated_buckets: s,
        })
        .collect();
    functions.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then(a.addr.cmp(&b.addr))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut modules: Vec<ModuleStat> = modules
        .into_iter()
        .map(|(name, samples)| ModuleStat { name, samples })
        .collect();
    modules.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.name.cmp(&b.name)));

    hot.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let hot = hot
        .into_iter()
        .take(opts.hot_addresses)
        .map(|(samples, addr, k)| HotAddress {
            addr,
            samples,
            location: match k {
                OUTSIDE => UnattributedKind::OutsideCode.label().to_string(),
                NONE => UnattributedKind::NoSymbol.label().to_string(),
                UNREADABLE => UnattributedKind::UnreadableMapLine.label().to_string(),
                k => format!("{}+0x{:X}", funcs[k].sym.name, addr - funcs[k].sym.addr),
            },
            source: match k {
                OUTSIDE => None,
                _ => map.line_at(addr).map(|l| format!("{}:{}", l.file, l.line)),
            },
        })
        .collect();

    let mut unattributed = Vec::new();
    let mut warnings = Vec::new();
    if outside > 0 {
        outside_examples.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let examples: Vec<String> = outside_examples
            .iter()
            .take(3)
            .map(|&(_, a)| match map.segment_at(a) {
                Some(s) => format!("0x{a:X} (in {})", s.name),
                None => format!("0x{a:X}"),
            })
            .collect();
        let causes = match (&opts.window, opts.segment_name.as_deref()) {
            (Some(_), seg) => format!(
                "the histogram's code segment{} may be the wrong one (check --segment), the \
                 program may have jumped into another segment sharing the frame, or the map \
                 does not describe this code",
                seg.map(|s| format!(" {s}")).unwrap_or_default()
            ),
            (None, _) => "the addresses may be relative to another load segment (check \
                          --load-segment), the samples may be data or another program's code, \
                          or the map does not describe this code"
                .to_string(),
        };
        unattributed.push(Unattributed {
            kind: UnattributedKind::OutsideCode,
            what: UnattributedKind::OutsideCode.label().into(),
            samples: outside,
            explanation: format!(
                "at addresses in no code segment of the map, e.g. {}: {causes}",
                examples.join(", ")
            ),
        });
    }
    if nosym > 0 {
        let mut why = String::from("inside code but inside no code symbol");
        if nosym_before > 0 {
            why.push_str(&format!(
                " ({nosym_before} before the first code symbol, e.g. start-up code)"
            ));
        }
        why.push_str(
            ": static (non-public) functions and library code without publics are not in the \
             map",
        );
        if has_modules {
            why.push_str("; the module table still places them");
        }
        unattributed.push(Unattributed {
            kind: UnattributedKind::NoSymbol,
            what: UnattributedKind::NoSymbol.label().into(),
            samples: nosym,
            explanation: why,
        });
    }
    for (&line, &(samples, k)) in &unreadable {
        unattributed.push(Unattributed {
            kind: UnattributedKind::UnreadableMapLine,
            what: format!("[after unreadable map line {line}]"),
            samples,
            explanation: format!(
                "after `{}` (0x{:x}), beyond what the map says is its: map line {line} could \
                 not be read and may have been another symbol, so these are not given to `{}`",
                funcs[k].sym.name, funcs[k].sym.addr, funcs[k].sym.name
            ),
        });
    }
    for e in &hist.external {
        unattributed.push(Unattributed {
            kind: UnattributedKind::External,
            what: format!("[{}]", e.what),
            samples: e.samples,
            explanation: e.explanation.clone(),
        });
    }

    if !hist.saturated.is_empty() {
        let mut names: Vec<&str> = functions
            .iter()
            .filter(|f| f.saturated_buckets > 0)
            .map(|f| f.name.as_str())
            .collect();
        names.truncate(8);
        warnings.push(format!(
            "{} counter(s) reached {SATURATED} (the 16-bit maximum): the true counts there are \
             higher, so these shares are underestimated{}; profile a shorter run or sample less often",
            hist.saturated.len(),
            if names.is_empty() {
                String::new()
            } else {
                format!(" (in {})", names.join(", "))
            }
        ));
    }
    // Text histograms carry 64-bit counts: sums past u64::MAX saturate.
    let overflow = hist.counts.values().any(|&n| n == u64::MAX)
        || hist
            .counts
            .values()
            .chain(hist.external.iter().map(|e| &e.samples))
            .try_fold(0u64, |t, &n| t.checked_add(n))
            .is_none();
    if overflow {
        warnings.push(format!(
            "the sample counts add up to more than {} (the 64-bit maximum): totals and shares \
             are capped there and wrong; check the histogram",
            u64::MAX
        ));
    }
    if straddle > 0 {
        warnings.push(format!(
            "{straddle} samples ({:.1}%) are in {}-byte buckets that cross a function boundary; \
             they were given to the function at the bucket start",
            100.0 * ratio(straddle, total),
            hist.bucket_bytes
        ));
    }
    if total == 0 {
        warnings.push("the histogram has no samples".into());
    } else if attributed == 0 {
        warnings.push(format!(
            "none of the {total} samples fell in a code symbol: is the map for this program, and \
             the code segment (--segment) the one the histogram was taken in?"
        ));
    }
    Ok(SampleProfile {
        name: opts.name.clone(),
        total,
        attributed,
        bucket_bytes: hist.bucket_bytes,
        functions,
        modules,
        hot,
        unattributed,
        warnings,
    })
}

/// Module ranges flattened into disjoint intervals, each naming the module
/// that [`MapFile`] ranges give it (code ranges first, then the smallest,
/// then the lowest start), for binary search.
struct ModuleIndex {
    names: Vec<String>,
    /// (start, end, index into `names`), sorted, disjoint.
    spans: Vec<(u64, u64, usize)>,
}

impl ModuleIndex {
    fn new(map: &MapFile) -> Self {
        let mut names: Vec<String> = map.modules.iter().map(|m| m.name.clone()).collect();
        names.sort();
        names.dedup();
        let name_idx = |n: &str| names.binary_search_by(|x| x.as_str().cmp(n)).unwrap_or(0);
        let mut bounds: Vec<u64> = map
            .modules
            .iter()
            .flat_map(|m| [m.start, m.end()])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        // Ranges sorted by start; those starting before an elementary
        // interval's end are the candidates.
        let mut ranges: Vec<&retroprof_symbols::maps::ModuleRange> =
            map.modules.iter().filter(|m| m.len > 0).collect();
        ranges.sort_by_key(|m| (m.start, m.end()));
        let mut spans: Vec<(u64, u64, usize)> = Vec::new();
        let mut active: Vec<&retroprof_symbols::maps::ModuleRange> = Vec::new();
        let mut next = 0;
        for w in bounds.windows(2) {
            let (a, b) = (w[0], w[1]);
            while next < ranges.len() && ranges[next].start <= a {
                active.push(ranges[next]);
                next += 1;
            }
            active.retain(|m| m.end() > a);
            if let Some(best) = active
                .iter()
                .min_by_key(|m| (!m.code, m.len, m.start, m.name.as_str()))
            {
                let i = name_idx(&best.name);
                match spans.last_mut() {
                    Some(last) if last.1 == a && last.2 == i => last.1 = b,
                    _ => spans.push((a, b, i)),
                }
            }
        }
        ModuleIndex { names, spans }
    }

    fn lookup(&self, addr: u64) -> Option<usize> {
        let i = self.spans.partition_point(|s| s.0 <= addr);
        let s = self.spans.get(i.checked_sub(1)?)?;
        (addr < s.1).then_some(s.2)
    }
}
