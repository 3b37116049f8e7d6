//! Where inside a function the time goes: costs per instruction address and
//! per source line, and their outputs.
//!
//! The engine keeps one master-clock counter per 2-byte address
//! ([`crate::pccost`]); at the end of the run `build` turns the executed
//! addresses of the counted frames into [`InstrStat`]s (their 68000
//! disassembly, `retroprof_m68k::disasm`, made when an output shows it:
//! [`CodeProfile::text`]) and, where the symbols' DWARF line
//! tables cover them, into per source line figures ([`LineStat`], self
//! cycles: the instructions at the line's addresses). Source text for the
//! lines is read from the file DWARF names, looked up under `--source-dir`
//! first, then next to the ELF and its parent folders.
//!
//! Outputs: the terminal report's hot lines / hot instructions section
//! ([`terminal_section`]), the HTML report's table ([`html_section`]),
//! `--lines FILE` ([`lines_csv`]), `--annotate FUNC` ([`annotate`]) and the
//! pprof / speedscope profiles with per-line leaf frames
//! ([`stack_profile_with_lines`]).
//!
//! Bounds: at most one [`InstrStat`] per executed 2-byte address (ROM up
//! to 4 MiB and work RAM), at most one [`LineStat`] per (function, file,
//! line) among them; file names are clipped to [`MAX_NAME`] characters;
//! at most [`MAX_SOURCE_FILES`] source files of at most
//! [`MAX_SOURCE_BYTES`] each are read, one at a time, and only the executed
//! lines' text (clipped to [`MAX_SNIPPET`] characters) is kept.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use retroprof_megadrive::timing::M68K_DIVIDER;
use retroprof_profile::{Frame, Sample, StackProfile};
use retroprof_symbols::{FunctionIndex, FunctionOrigin};

use crate::build::cyc;
use crate::engine::Profiler;
use crate::output::{thousands, OutputError, Style};
use crate::report::Report;
use crate::Session;

/// Longest source file name kept (characters).
pub const MAX_NAME: usize = 1024;
/// Source files read for snippets, at most.
pub const MAX_SOURCE_FILES: usize = 512;
/// Largest source file read for snippets.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;
/// Longest source snippet kept (characters).
pub const MAX_SNIPPET: usize = 160;

/// Functions shown in the terminal report's hot section.
pub const TERMINAL_FUNCTIONS: usize = 3;
/// Rows per function in the terminal report's hot section.
pub const TERMINAL_ROWS: usize = 5;
/// Functions in the HTML report's hot table.
pub const HTML_FUNCTIONS: usize = 5;
/// Rows per function in the HTML report's hot table.
pub const HTML_ROWS: usize = 10;

/// Per-instruction and per-line costs of one run (counted frames).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodeProfile {
    /// Source files named by [`LineStat::file`], in order of first use.
    pub files: Vec<SourceFile>,
    /// Every instruction address charged at least one master clock over
    /// the counted frames, by address.
    pub instructions: Vec<InstrStat>,
    /// Costs per source line, by function, then file, then line.
    pub lines: Vec<LineStat>,
    /// Exception entry processing (not an instruction) per function:
    /// (function index, 68000 cycles), by function index.
    pub entry: Vec<(usize, f64)>,
    /// Indices into `instructions` by function, then address (for
    /// [`CodeProfile::rows`]).
    pub by_function: Vec<u32>,
    /// Addresses whose DWARF line lookup failed (corrupt line program);
    /// they count as instructions without a line.
    pub line_errors: u64,
    /// What [`CodeProfile::text`] disassembles from.
    pub disasm: Disasm,
}

/// The ROM and function index an instruction's text is disassembled from
/// when an output shows it ([`CodeProfile::text`]): a run executes
/// thousands of instructions and the reports show a few dozen, so none is
/// disassembled at the end of the run. Empty in a default profile (no
/// text). Two are equal when their ROM bytes and functions are.
#[derive(Clone, Default)]
pub struct Disasm(Option<Arc<DisasmSource>>);

struct DisasmSource {
    rom: Arc<retroprof_megadrive::Rom>,
    /// Instructions below this address have a text ([`Attribution::rom_len`]).
    ///
    /// [`Attribution::rom_len`]: crate::engine::Attribution::rom_len
    rom_len: u32,
    index: Arc<FunctionIndex>,
}

impl Disasm {
    /// Disassemble from `rom` with target names from `index`; addresses
    /// at or past `rom_len` get no text (code in RAM).
    pub fn new(
        rom: Arc<retroprof_megadrive::Rom>,
        rom_len: u32,
        index: Arc<FunctionIndex>,
    ) -> Disasm {
        Disasm(Some(Arc::new(DisasmSource {
            rom,
            rom_len,
            index,
        })))
    }
}

impl std::fmt::Debug for Disasm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(d) => f
                .debug_struct("Disasm")
                .field("rom_bytes", &d.rom.data.len())
                .field("rom_len", &d.rom_len)
                .finish_non_exhaustive(),
            None => f.write_str("Disasm(none)"),
        }
    }
}

impl PartialEq for Disasm {
    fn eq(&self, other: &Disasm) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                Arc::ptr_eq(a, b)
                    || (a.rom_len == b.rom_len
                        && a.rom.data == b.rom.data
                        && a.index.functions() == b.index.functions())
            }
            _ => false,
        }
    }
}

/// A source file named by DWARF.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceFile {
    /// As DWARF names it (joined with its compilation directory).
    pub name: String,
    /// Where its text was found and read, if anywhere.
    pub found: Option<PathBuf>,
}

/// One executed instruction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstrStat {
    /// 24-bit address.
    pub addr: u32,
    /// Index into [`Report::functions`].
    pub function: usize,
    pub mclk: u64,
    pub cycles: f64,
    /// Index into [`CodeProfile::lines`], when DWARF gives its line.
    pub line: Option<usize>,
}

/// One source line's self cost inside one function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineStat {
    /// Index into [`Report::functions`].
    pub function: usize,
    /// Index into [`CodeProfile::files`].
    pub file: usize,
    pub line: u32,
    pub mclk: u64,
    pub cycles: f64,
    /// Lowest executed address of the line in this function.
    pub first_addr: u32,
    /// Executed instructions at the line.
    pub instructions: u32,
    /// The line's source text (trimmed), when the file was found.
    pub text: Option<String>,
}

/// Errors of the code-level outputs (the user's arguments).
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error("--annotate {name:?}: no such function{}", near_list(.near))]
    UnknownFunction { name: String, near: Vec<String> },
    #[error("--source-dir {path}: {reason}")]
    SourceDir { path: String, reason: String },
}

fn near_list(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!("; near names: {}", near.join(", "))
    }
}

/// Check a `--source-dir` argument: it must be a readable folder.
pub fn check_source_dir(dir: &Path) -> Result<(), CodeError> {
    let err = |reason: &str| CodeError::SourceDir {
        path: dir.display().to_string(),
        reason: reason.to_string(),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => match std::fs::read_dir(dir) {
            Ok(_) => Ok(()),
            Err(e) => Err(err(&format!("cannot read the folder: {e}"))),
        },
        Ok(_) => Err(err("is not a folder")),
        Err(e) => Err(err(&format!("cannot open it: {e}"))),
    }
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// Disassemble the ROM instruction at `pc`, its static target named after
/// the function it falls in (`<name>` or `<name+0x12>`).
pub fn disassemble(rom: &[u8], index: &FunctionIndex, pc: u32) -> String {
    disassemble_until(rom, index, pc, rom.len() as u32).0
}

/// [`disassemble`] reading no word at or past `end` (a function's end:
/// padding after its last instruction is shown as `dc.w`); also gives
/// the instruction's length in bytes.
fn disassemble_until(rom: &[u8], index: &FunctionIndex, pc: u32, end: u32) -> (String, u32) {
    let end = end.min(rom.len() as u32);
    let word = |a: u32| {
        (a as u64 + 2 <= end as u64)
            .then(|| u16::from_be_bytes([rom[a as usize], rom[a as usize + 1]]))
    };
    match retroprof_m68k::disasm::disassemble(pc, word) {
        Ok(ins) => {
            let mut t = ins.to_string();
            if let Some(target) = ins.target {
                let f = index.function(index.lookup(target as u64));
                if f.origin == FunctionOrigin::Symbol || f.origin == FunctionOrigin::Label {
                    let off = target as u64 - f.start;
                    if off == 0 {
                        let _ = write!(t, " <{}>", f.name);
                    } else {
                        let _ = write!(t, " <{}+0x{off:x}>", f.name);
                    }
                }
            }
            (t, ins.len.max(2))
        }
        // The code ends inside the instruction: show the opcode word.
        Err(_) => match word(pc) {
            Some(w) => (format!("dc.w ${w:04x}"), 2),
            None => ("(no code)".to_string(), 2),
        },
    }
}

/// Candidate paths for a source file DWARF names `name`: under
/// `source_dir` (the whole name, then shorter and shorter tails of it),
/// the name itself when absolute, then relative to the ELF's folder and
/// up to four of its parents, then the bare file name next to the ELF.
fn source_candidates(
    name: &str,
    elf_dir: Option<&Path>,
    source_dir: Option<&Path>,
) -> Vec<PathBuf> {
    let p = Path::new(name);
    let parts: Vec<&std::ffi::OsStr> = p
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    let mut v = Vec::new();
    if let Some(d) = source_dir {
        for i in 0..parts.len() {
            let mut q = d.to_path_buf();
            for s in &parts[i..] {
                q.push(s);
            }
            v.push(q);
        }
    }
    if p.is_absolute() {
        v.push(p.to_path_buf());
    } else if let Some(d) = elf_dir {
        let mut dir = Some(d);
        for _ in 0..5 {
            let Some(x) = dir else { break };
            v.push(x.join(p));
            dir = x.parent();
        }
    }
    if let (Some(d), Some(base)) = (elf_dir, parts.last()) {
        v.push(d.join(base));
    }
    v
}

fn find_source(name: &str, elf_dir: Option<&Path>, source_dir: Option<&Path>) -> Option<PathBuf> {
    source_candidates(name, elf_dir, source_dir)
        .into_iter()
        .find(|c| std::fs::metadata(c).is_ok_and(|m| m.is_file()))
}

/// Read a source file's lines (bounded; `None` when unreadable).
fn read_source(path: &Path) -> Option<Vec<String>> {
    let bytes = retroprof_symbols::input::read_limited(path, MAX_SOURCE_BYTES).ok()?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return None;
    }
    let text = String::from_utf8_lossy(&bytes);
    Some(text.lines().map(|l| l.to_string()).collect())
}

/// Build the code profile of a finished run: `fidx[attr]` is the report
/// function index of each attribution id (`usize::MAX`: not reported).
pub(crate) fn build(s: &Session, p: &Profiler, fidx: &[usize]) -> (CodeProfile, Vec<String>) {
    let mut warnings = Vec::new();
    let pcs = &p.pcs;
    let debug = s.symbols.as_ref().and_then(|sy| sy.debug.as_ref());
    let mut code = CodeProfile {
        disasm: Disasm::new(s.rom.clone(), p.attr.rom_len(), s.index.clone()),
        ..CodeProfile::default()
    };
    let mut file_ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut line_ids: BTreeMap<(usize, usize, u32), usize> = BTreeMap::new();
    let mut first_error: Option<(u32, String)> = None;
    for slot in 0..pcs.slots() {
        let m = pcs.counted(slot);
        if m == 0 {
            continue;
        }
        let Some(pc) = pcs.slot_pc(slot) else {
            continue; // outside ROM and RAM: attribution id 0, no address
        };
        let f = fidx
            .get(p.attr.id(pc) as usize)
            .copied()
            .unwrap_or(usize::MAX);
        if f == usize::MAX {
            continue;
        }
        let in_rom = pc < p.attr.rom_len();
        let mut line = None;
        if let (Some(d), true) = (debug, in_rom) {
            match d.try_location(pc as u64) {
                Ok(Some(loc)) => {
                    if let Some(n) = loc.line {
                        let name = clip(&loc.file, MAX_NAME);
                        let next = code.files.len();
                        let fi = *file_ids.entry(name.clone()).or_insert_with(|| {
                            code.files.push(SourceFile { name, found: None });
                            next
                        });
                        let next = code.lines.len();
                        let li = *line_ids.entry((f, fi, n)).or_insert_with(|| {
                            code.lines.push(LineStat {
                                function: f,
                                file: fi,
                                line: n,
                                first_addr: pc,
                                ..LineStat::default()
                            });
                            next
                        });
                        let ls = &mut code.lines[li];
                        ls.mclk += m;
                        ls.instructions += 1;
                        line = Some(li);
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    code.line_errors += 1;
                    first_error.get_or_insert((pc, e));
                }
            }
        }
        code.instructions.push(InstrStat {
            addr: pc,
            function: f,
            mclk: m,
            cycles: cyc(m),
            line,
        });
    }
    if let (Some((pc, e)), Some(d)) = (&first_error, debug) {
        warnings.push(format!(
            "{}: the DWARF line table cannot be read at {} executed address(es) (first 0x{pc:06x}: {e}); \
             those show as instructions without a source line",
            d.path(),
            code.line_errors
        ));
    }
    // Lines in (function, file, line) order; instructions point at them.
    let mut order: Vec<usize> = (0..code.lines.len()).collect();
    order.sort_by_key(|&i| {
        let l = &code.lines[i];
        (l.function, l.file, l.line)
    });
    let mut new_of = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_of[old] = new;
    }
    let mut lines: Vec<LineStat> = order.iter().map(|&i| code.lines[i].clone()).collect();
    for l in &mut lines {
        l.cycles = cyc(l.mclk);
    }
    code.lines = lines;
    for ins in &mut code.instructions {
        if let Some(l) = ins.line.as_mut() {
            *l = new_of[*l];
        }
    }
    let mut by_function: Vec<u32> = (0..code.instructions.len() as u32).collect();
    by_function.sort_by_key(|&i| {
        let ins = &code.instructions[i as usize];
        (ins.function, ins.addr)
    });
    code.by_function = by_function;
    // Source text, one file at a time.
    let elf_dir = debug.and_then(|d| Path::new(d.path()).parent().map(Path::to_path_buf));
    let source_dir = s.source_dir.as_deref();
    for (fi, file) in code.files.iter_mut().enumerate() {
        if fi >= MAX_SOURCE_FILES {
            break;
        }
        let Some(path) = find_source(&file.name, elf_dir.as_deref(), source_dir) else {
            continue;
        };
        let Some(text) = read_source(&path) else {
            continue;
        };
        for l in code.lines.iter_mut().filter(|l| l.file == fi) {
            if let Some(t) = text.get(l.line as usize - 1) {
                l.text = Some(clip(t.trim(), MAX_SNIPPET).replace('\t', " "));
            }
        }
        file.found = Some(path);
    }
    // Exception entry per function.
    let mut entry: BTreeMap<usize, u64> = BTreeMap::new();
    for a in 0..p.attr.len() {
        let m = pcs.counted_entry(a as u32);
        if m > 0 {
            if let Some(&f) = fidx.get(a).filter(|&&f| f != usize::MAX) {
                *entry.entry(f).or_default() += m;
            }
        }
    }
    code.entry = entry.into_iter().map(|(f, m)| (f, cyc(m))).collect();
    (code, warnings)
}

/// One row of a hot list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HotRow<'a> {
    /// A source line (DWARF).
    Line(&'a LineStat),
    /// An instruction DWARF gives no line for.
    Instr(&'a InstrStat),
    /// Exception entry processing charged to the function (cycles).
    Entry(f64),
}

impl HotRow<'_> {
    pub fn cycles(&self) -> f64 {
        match self {
            HotRow::Line(l) => l.cycles,
            HotRow::Instr(i) => i.cycles,
            HotRow::Entry(c) => *c,
        }
    }

    fn addr(&self) -> u32 {
        match self {
            HotRow::Line(l) => l.first_addr,
            HotRow::Instr(i) => i.addr,
            HotRow::Entry(_) => u32::MAX,
        }
    }
}

impl CodeProfile {
    /// The 68000 disassembly (Motorola syntax) of instruction `i`, its
    /// static target named after the function it falls in; empty for code
    /// outside ROM (and in a profile with no [`Disasm`]).
    pub fn text(&self, i: &InstrStat) -> String {
        match &self.disasm.0 {
            Some(d) if i.addr < d.rom_len => disassemble(&d.rom.data, &d.index, i.addr),
            _ => String::new(),
        }
    }

    /// Any source lines (DWARF line tables covered executed code)?
    pub fn has_lines(&self) -> bool {
        !self.lines.is_empty()
    }

    /// The rows of function `f` (report index), hottest first, ties by
    /// address: its source lines, its instructions without a line, and its
    /// exception entry time.
    pub fn rows(&self, f: usize) -> Vec<HotRow<'_>> {
        let mut v: Vec<HotRow> = Vec::new();
        let lo = self.lines.partition_point(|l| l.function < f);
        v.extend(
            self.lines[lo..]
                .iter()
                .take_while(|l| l.function == f)
                .map(HotRow::Line),
        );
        let ins = &self.instructions;
        let lo = self
            .by_function
            .partition_point(|&i| ins[i as usize].function < f);
        v.extend(
            self.by_function[lo..]
                .iter()
                .map(|&i| &ins[i as usize])
                .take_while(|i| i.function == f)
                .filter(|i| i.line.is_none())
                .map(HotRow::Instr),
        );
        if let Ok(k) = self.entry.binary_search_by_key(&f, |e| e.0) {
            v.push(HotRow::Entry(self.entry[k].1));
        }
        v.sort_by(|a, b| {
            b.cycles()
                .total_cmp(&a.cycles())
                .then(a.addr().cmp(&b.addr()))
        });
        v
    }

    fn file_name(&self, i: usize) -> &str {
        self.files.get(i).map_or("?", |f| f.name.as_str())
    }
}

/// The functions the hot sections show: the `n` busiest non-idle
/// functions (report order) that have rows.
pub fn hot_functions(r: &Report, n: usize) -> Vec<usize> {
    r.functions
        .iter()
        .enumerate()
        .filter(|(i, f)| !f.idle && f.self_cycles > 0.0 && !r.code.rows(*i).is_empty())
        .take(n)
        .map(|(i, _)| i)
        .collect()
}

/// "hot lines", "hot instructions" or both, by what the shown rows are.
fn section_title(r: &Report, funcs: &[usize], rows: usize) -> &'static str {
    let (mut lines, mut instrs) = (false, false);
    for &f in funcs {
        for row in r.code.rows(f).iter().take(rows) {
            match row {
                HotRow::Line(_) => lines = true,
                HotRow::Instr(_) => instrs = true,
                HotRow::Entry(_) => {}
            }
        }
    }
    match (lines, instrs) {
        (true, false) => "hot lines",
        (true, true) => "hot lines and instructions",
        _ => "hot instructions",
    }
}

fn base_name(s: &str) -> &str {
    s.rsplit(['/', '\\']).next().unwrap_or(s)
}

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a * 100.0 / b
    } else {
        0.0
    }
}

/// Where a row is and what it says: (`file:line` or address, text).
fn row_place(c: &CodeProfile, row: &HotRow) -> (String, String) {
    match row {
        HotRow::Line(l) => {
            let text = l.text.clone().unwrap_or_else(|| {
                // No source text: the line's first instruction.
                c.instructions
                    .binary_search_by_key(&l.first_addr, |i| i.addr)
                    .ok()
                    .map(|k| c.text(&c.instructions[k]))
                    .unwrap_or_default()
            });
            (
                format!("{}:{}", base_name(c.file_name(l.file)), l.line),
                text,
            )
        }
        HotRow::Instr(i) => (format!("{:06x}", i.addr), {
            let text = c.text(i);
            if text.is_empty() {
                "(code in RAM)".to_string()
            } else {
                text
            }
        }),
        HotRow::Entry(_) => ("-".to_string(), "(exception entry)".to_string()),
    }
}

fn fit(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{t}~")
    }
}

/// The terminal report's section: the hottest source lines (DWARF) or
/// instructions of the busiest functions, within 80 columns. Empty when
/// nothing ran.
pub fn terminal_section(r: &Report, color: bool) -> String {
    let st = Style { on: color };
    let funcs = hot_functions(r, TERMINAL_FUNCTIONS);
    if funcs.is_empty() {
        return String::new();
    }
    let c = &r.code;
    let what = section_title(r, &funcs, TERMINAL_ROWS);
    let mut o = String::new();
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{}",
        st.bold(&format!("{what} (% of the function's self cycles)"))
    );
    for f in funcs {
        let fs = &r.functions[f];
        let _ = writeln!(
            o,
            "  {}  {} cycles, {:.2}% busy",
            fit(&fs.name, 44),
            thousands(fs.self_cycles),
            fs.pct_busy
        );
        for row in c.rows(f).iter().take(TERMINAL_ROWS) {
            let (place, text) = row_place(c, row);
            // 4 + 7 + 2 + 13 + 2 + 16 + 2 = 46; text gets the rest of 80.
            let _ = writeln!(
                o,
                "    {:>6.2}% {:>13}  {:<16}  {}",
                pct(row.cycles(), fs.self_cycles),
                thousands(row.cycles()),
                fit(&place, 16),
                fit(&text, 80 - 4 - 8 - 14 - 18 - 1)
            );
        }
    }
    o
}

/// The HTML report's "hot lines / hot instructions" section (a fragment:
/// `<h2>` and a table; ids `hot-code`).
pub fn html_section(r: &Report) -> String {
    use crate::html::esc;
    let funcs = hot_functions(r, HTML_FUNCTIONS);
    let c = &r.code;
    let what = section_title(r, &funcs, HTML_ROWS);
    let mut s = String::new();
    let _ = writeln!(s, "<h2>{}{}</h2>", what[..1].to_uppercase(), &what[1..]);
    if funcs.is_empty() {
        s.push_str("<p>No instruction ran in the counted frames.</p>\n");
        return s;
    }
    s.push_str("<table id=\"hot-code\"><tr><th>function</th><th>where</th><th>cycles</th><th>% of function</th><th>code</th></tr>\n");
    for f in funcs {
        let fs = &r.functions[f];
        for (k, row) in c.rows(f).iter().take(HTML_ROWS).enumerate() {
            let (place, text) = row_place(c, row);
            let place = match row {
                HotRow::Line(l) => format!("{}:{}", c.file_name(l.file), l.line),
                _ => place,
            };
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td><td><code>{}</code></td></tr>",
                if k == 0 { esc(&fs.name) } else { String::new() },
                esc(&place),
                esc(&thousands(row.cycles())),
                pct(row.cycles(), fs.self_cycles),
                esc(&text)
            );
        }
    }
    s.push_str("</table>\n");
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `--lines FILE`: one row per source line of each function (DWARF) and
/// one per executed instruction DWARF gives no line for (file and line
/// empty), functions in report order, rows by address.
pub fn lines_csv<W: Write>(r: &Report, mut w: W) -> Result<(), OutputError> {
    writeln!(
        w,
        "function,file,line,addr,cycles,pct_function,pct_busy,instructions,code"
    )?;
    let c = &r.code;
    let busy = r.summary.busy_cycles;
    for (f, fs) in r.functions.iter().enumerate() {
        let mut rows = c.rows(f);
        rows.retain(|row| !matches!(row, HotRow::Entry(_)));
        rows.sort_by_key(|row| row.addr());
        for row in rows {
            let (file, line, n, text) = match row {
                HotRow::Line(l) => (
                    c.file_name(l.file).to_string(),
                    l.line.to_string(),
                    l.instructions,
                    l.text.clone().unwrap_or_default(),
                ),
                HotRow::Instr(i) => (String::new(), String::new(), 1, c.text(i)),
                HotRow::Entry(_) => unreachable!("filtered above"),
            };
            writeln!(
                w,
                "{},{},{},0x{:06x},{:.1},{:.3},{:.3},{},{}",
                csv_field(&fs.name),
                csv_field(&file),
                line,
                row.addr(),
                row.cycles(),
                pct(row.cycles(), fs.self_cycles),
                if fs.idle {
                    0.0
                } else {
                    pct(row.cycles(), busy)
                },
                n,
                csv_field(&text)
            )?;
        }
    }
    Ok(())
}

/// Levenshtein distance (for near names), capped work: both inputs are
/// function names.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(256).collect();
    let b: Vec<char> = b.chars().take(256).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Names close to `name` among the index's functions (at most 8).
fn near_names(index: &FunctionIndex, name: &str) -> Vec<String> {
    let lower = name.to_lowercase();
    let mut v: Vec<(usize, String)> = index
        .functions()
        .iter()
        .filter(|f| matches!(f.origin, FunctionOrigin::Symbol | FunctionOrigin::Label))
        .filter_map(|f| {
            let fl = f.name.to_lowercase();
            let d = distance(&lower, &fl);
            let close =
                d <= (name.chars().count() / 3).max(2) || (lower.len() >= 3 && fl.contains(&lower));
            close.then(|| (d, f.name.clone()))
        })
        .collect();
    v.sort();
    v.dedup_by(|a, b| a.1 == b.1);
    v.into_iter().take(8).map(|(_, n)| n).collect()
}

/// `--annotate FUNC`: the function's instructions in address order with
/// their cycles and share of the function's self cycles, like `perf
/// annotate`; with DWARF lines, each source line is shown (with its total)
/// above its instructions. `name` is a function name, an alias, or the base
/// name of a compiler clone (`foo` for `foo.constprop.0`).
pub fn annotate(s: &Session, r: &Report, name: &str) -> Result<String, CodeError> {
    let index = &s.index;
    let funcs = index.functions();
    let fid = find_function(index, name)?;
    let func = &funcs[fid];
    let c = &r.code;
    annotate_function(s, r, c, func)
}

/// The function `--annotate NAME` means: a function name, an alias, the
/// base name of a compiler clone, or an address-range pseudo-function's
/// name (no symbols). Unknown: an error listing near names.
pub fn find_function(index: &FunctionIndex, name: &str) -> Result<usize, CodeError> {
    let funcs = index.functions();
    let found = funcs
        .iter()
        .position(|f| {
            matches!(f.origin, FunctionOrigin::Symbol | FunctionOrigin::Label)
                && (f.name == name || f.aliases.iter().any(|a| a == name))
        })
        .or_else(|| {
            funcs.iter().position(|f| {
                f.origin == FunctionOrigin::Symbol
                    && retroprof_symbols::clone_base_name(&f.name) == name
            })
        })
        .or_else(|| {
            // A bucket pseudo-function by name (no symbols).
            funcs
                .iter()
                .position(|f| f.origin == FunctionOrigin::Bucket && f.name == name)
        });
    found.ok_or_else(|| CodeError::UnknownFunction {
        name: name.to_string(),
        near: near_names(index, name),
    })
}

fn annotate_function(
    s: &Session,
    r: &Report,
    c: &CodeProfile,
    func: &retroprof_symbols::Function,
) -> Result<String, CodeError> {
    let index = &s.index;
    // Report functions that are this physical function's code (inlined
    // pieces included).
    let mine: Vec<usize> = r
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.addr as u64 == func.start && f.origin != "unknown")
        .map(|(i, _)| i)
        .collect();
    let self_cycles: f64 = mine.iter().map(|&i| r.functions[i].self_cycles).sum();
    let calls = mine
        .iter()
        .map(|&i| r.functions[i].calls)
        .max()
        .unwrap_or(0);
    let entry: f64 = c
        .entry
        .iter()
        .filter(|e| mine.contains(&e.0))
        .map(|e| e.1)
        .sum();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "annotate {} (0x{:06x}-0x{:06x}{}): {} cycles over the counted frames ({:.2}% of busy), {} calls",
        func.name,
        func.start,
        func.end,
        match (&func.file, func.line) {
            (Some(f), Some(l)) => format!(", {f}:{l}"),
            (Some(f), None) => format!(", {f}"),
            _ => String::new(),
        },
        thousands(self_cycles),
        pct(self_cycles, r.summary.busy_cycles),
        calls
    );
    let _ = writeln!(
        o,
        "{:>13} {:>7}  {:<8}  instruction / source line",
        "cycles", "%", "address"
    );
    if entry > 0.0 {
        let _ = writeln!(
            o,
            "{:>13} {:>6.2}%  {:<8}  (exception entry processing)",
            thousands(entry),
            pct(entry, self_cycles),
            "-"
        );
    }
    let rom = &s.rom.data;
    let debug = s.symbols.as_ref().and_then(|sy| sy.debug.as_ref());
    let mut source: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    let elf_dir = debug.and_then(|d| Path::new(d.path()).parent().map(Path::to_path_buf));
    let mut last_line: Option<(String, u32)> = None;
    let end = func.end.min(rom.len() as u64) as u32;
    let mut pc = func.start as u32;
    if pc as u64 >= rom.len() as u64 {
        let _ = writeln!(o, "(the function is not in ROM: no code to show)");
    }
    while pc < end {
        let (text, len) = disassemble_until(rom, index, pc, end);
        if let Some(d) = debug {
            if let Ok(Some(loc)) = d.try_location(pc as u64) {
                if let Some(n) = loc.line {
                    let key = (loc.file.clone(), n);
                    if last_line.as_ref() != Some(&key) {
                        let lines = source.entry(loc.file.clone()).or_insert_with(|| {
                            find_source(&loc.file, elf_dir.as_deref(), s.source_dir.as_deref())
                                .and_then(|p| read_source(&p))
                        });
                        let src = lines
                            .as_ref()
                            .and_then(|l| l.get(n as usize - 1))
                            .map(|t| clip(t.trim_end(), MAX_SNIPPET).replace('\t', "    "))
                            .unwrap_or_default();
                        let line_cycles: f64 = c
                            .lines
                            .iter()
                            .filter(|l| {
                                mine.contains(&l.function)
                                    && l.line == n
                                    && c.file_name(l.file) == clip(&loc.file, MAX_NAME)
                            })
                            .map(|l| l.cycles)
                            .sum();
                        let (cy, pc_s) = if line_cycles > 0.0 {
                            (
                                thousands(line_cycles),
                                format!("{:>6.2}%", pct(line_cycles, self_cycles)),
                            )
                        } else {
                            (String::new(), String::new())
                        };
                        let _ = writeln!(
                            o,
                            "{:>13} {:>7}  {}:{}  {}",
                            cy,
                            pc_s,
                            base_name(&loc.file),
                            n,
                            src
                        );
                        last_line = Some(key);
                    }
                }
            }
        }
        let cycles = c
            .instructions
            .binary_search_by_key(&pc, |i| i.addr)
            .ok()
            .map(|k| c.instructions[k].cycles);
        match cycles {
            Some(cy) => {
                let _ = writeln!(
                    o,
                    "{:>13} {:>6.2}%    {:06x}  {}",
                    thousands(cy),
                    pct(cy, self_cycles),
                    pc,
                    text
                );
            }
            None => {
                let _ = writeln!(o, "{:>13} {:>7}    {:06x}  {}", "", "", pc, text);
            }
        }
        pc = pc.saturating_add(len);
    }
    Ok(o)
}

/// [`crate::output::stack_profile`] with each stack's leaf function split
/// into one leaf frame per source line (file and line set, the line's
/// first address as the frame's address) where the function has DWARF
/// lines: what pprof's `-list` and speedscope show per line. A stack's
/// master clocks are split over its leaf function's lines in proportion
/// to the lines' costs (the per-address table is not per stack; each
/// line's total is exact to within one master clock per stack); the part
/// of a function no line covers (instructions without a line, exception
/// entry) stays on the function's own frame. Without lines this is the
/// plain stack profile.
pub fn stack_profile_with_lines(r: &Report) -> StackProfile {
    let mut sp = crate::output::stack_profile(r);
    let c = &r.code;
    if !c.has_lines() {
        return sp;
    }
    // Per function: (frame index, mclk) of its lines, and the rest.
    let nf = r.functions.len();
    let mut parts: Vec<Vec<(u32, u64)>> = vec![Vec::new(); nf];
    let mut covered = vec![0u64; nf];
    for l in &c.lines {
        let fs = &r.functions[l.function];
        let fr = Frame {
            name: fs.name.clone(),
            addr: Some(l.first_addr as u64),
            file: Some(c.file_name(l.file).to_string()),
            line: Some(l.line),
            module: None,
            inlined: false,
        };
        // The function's own frame when it is the same (its first line).
        let frame = if sp.frames[l.function] == fr {
            l.function as u32
        } else {
            sp.frames.push(fr);
            (sp.frames.len() - 1) as u32
        };
        parts[l.function].push((frame, l.mclk));
        covered[l.function] += l.mclk;
    }
    let mut total = vec![0u64; nf];
    for i in &c.instructions {
        total[i.function] += i.mclk;
    }
    for &(f, cy) in &c.entry {
        total[f] += (cy * M68K_DIVIDER as f64).round() as u64;
    }
    let mut samples = Vec::with_capacity(sp.samples.len());
    for st in r.stacks.iter().filter(|s| s.mclk > 0) {
        let leaf = *st.stack.last().unwrap_or(&usize::MAX);
        let base: Vec<u32> = st.stack.iter().map(|&i| i as u32).collect();
        // The stack's value in cycles, rounded once as without lines
        // (output::stack_profile), then split in whole cycles: the pieces
        // sum to it exactly, so every function's flat and cumulative
        // totals are those of the profile without lines.
        let cycles = (st.mclk + M68K_DIVIDER / 2) / M68K_DIVIDER;
        let push = |samples: &mut Vec<Sample>, stack: Vec<u32>, v: u64| {
            let v = v as i64;
            if v > 0 {
                samples.push(Sample {
                    stack,
                    values: vec![v],
                });
            }
        };
        if leaf >= nf || parts[leaf].is_empty() || total[leaf] == 0 {
            push(&mut samples, base, cycles);
            continue;
        }
        let w_total = total[leaf].max(covered[leaf]) as u128;
        let rest_w = w_total - covered[leaf] as u128;
        // Largest-remainder split of the cycles over the lines and the rest
        // (weights: master clocks).
        let weights: Vec<u128> = parts[leaf]
            .iter()
            .map(|&(_, m)| m as u128)
            .chain(std::iter::once(rest_w))
            .collect();
        let m = cycles as u128;
        let mut alloc: Vec<u128> = weights.iter().map(|&w| m * w / w_total).collect();
        let mut left = m - alloc.iter().sum::<u128>();
        let mut rema: Vec<(u128, usize)> = weights
            .iter()
            .enumerate()
            .map(|(k, &w)| (m * w % w_total, k))
            .collect();
        rema.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(_, k) in &rema {
            if left == 0 {
                break;
            }
            alloc[k] += 1;
            left -= 1;
        }
        for (k, &(frame, _)) in parts[leaf].iter().enumerate() {
            let mut stack = base.clone();
            *stack.last_mut().expect("non-empty stack") = frame;
            push(&mut samples, stack, alloc[k] as u64);
        }
        push(&mut samples, base, alloc[parts[leaf].len()] as u64);
    }
    sp.samples = samples;
    sp
}
