//! Options shared by several subcommands, and the value enums of the
//! enumerated options (so that `--help` lists their values and clap
//! refuses others with the list).

use super::profile::{EntryArg, RuleArg};
use super::run::RegionArg;

/// `--color`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorWhen {
    /// Colour when the report goes to a terminal and NO_COLOR is unset.
    #[default]
    Auto,
    /// Always colour (even into a pipe or a file; wins over NO_COLOR).
    Always,
    /// Never colour.
    Never,
}

/// The options every subcommand takes (global: they may come before or
/// after the subcommand's name).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// When to colour the terminal report (auto: NO_COLOR set means never).
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// Print no report, progress or notes: only the files asked for,
    /// warnings, errors and gate failures.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

const ROM_HEADING: &str = "Running the ROM";

/// How a ROM is run: the options `profile` and `diff` (for its ROM sides)
/// share.
/// (A heading per option: a struct-wide `next_help_heading` would carry
/// over to the options declared after the flattened struct.)
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RomArgs {
    /// Frames to run.
    #[arg(short = 'n', long, help_heading = ROM_HEADING, default_value_t = 1800, value_name = "N")]
    pub frames: u64,

    /// Statistics start at frame F (earlier frames still run and appear in --csv).
    #[arg(long, help_heading = ROM_HEADING, default_value_t = 0, value_name = "F")]
    pub from: u64,

    /// Pad 1 script: FROM-TO:BUTTONS, FROM:BUTTONS or FROM-:BUTTONS.
    ///
    /// Frames count from 0; FROM-TO is inclusive, FROM- runs to the end.
    /// BUTTONS are letters of UDLRABCSXYZM (Up Down Left Right, A B C,
    /// S = Start, X Y Z, M = Mode); several entries may be comma-separated
    /// and the option repeated. Example: `-i 60-:R -i 120-130:C`.
    #[arg(short = 'i', long, help_heading = ROM_HEADING, value_name = "SPEC")]
    pub input: Vec<String>,

    /// Pad 2 script (same syntax).
    #[arg(long, help_heading = ROM_HEADING, value_name = "SPEC")]
    pub input2: Vec<String>,

    /// Force the console region instead of the ROM header's.
    #[arg(long, help_heading = ROM_HEADING, value_enum, value_name = "REGION")]
    pub region: Option<RegionArg>,

    /// Idle function (repeatable); default VDP_waitVBlank and VDP_waitVSync.
    #[arg(long, help_heading = ROM_HEADING, value_name = "NAME")]
    pub idle: Vec<String>,

    /// Keep local labels (.loop) as functions of their own instead of merging them.
    #[arg(long, help_heading = ROM_HEADING, help_heading = ROM_HEADING)]
    pub keep_labels: bool,

    /// Where interrupt entry processing (44 cycles per interrupt) is charged:
    /// to the handler, or to the interrupted code as a before-each-instruction
    /// emulator hook charges it (use to compare with such tools).
    #[arg(long, help_heading = ROM_HEADING, value_enum, default_value_t = EntryArg::Handler, value_name = "WHERE")]
    pub entry: EntryArg,

    /// Apply one of the reference emulator's (Genesis Plus GX's) timing rules
    /// instead of the hardware's bus-cycle timing (repeatable; a comparison
    /// aid: each moves the Z80's phase, see crates/megadrive/README.md).
    #[arg(long, help_heading = ROM_HEADING, value_enum, value_name = "RULE")]
    pub reference_rule: Vec<RuleArg>,
}

/// `heap --group`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GroupArg {
    /// By function (inlined frames resolved with an ELF's DWARF).
    #[default]
    Function,
    /// By source file and line (needs DWARF lines or an nm -l listing).
    Line,
    /// By return address.
    Address,
}

impl GroupArg {
    pub fn grouping(self) -> retroprof_heap::Grouping {
        match self {
            GroupArg::Function => retroprof_heap::Grouping::Function,
            GroupArg::Line => retroprof_heap::Grouping::Line,
            GroupArg::Address => retroprof_heap::Grouping::Address,
        }
    }
}

/// `heap --arch`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchArg {
    /// MIPS (PSP, Daedalus): the call is at RA-8.
    #[value(alias = "psp", alias = "allegrex")]
    Mips,
    /// 68000 (Mega Drive): RA-2 is looked up.
    #[value(alias = "68000", alias = "68k", alias = "megadrive", alias = "genesis")]
    M68k,
}

impl ArchArg {
    pub fn arch(self) -> retroprof_heap::Arch {
        match self {
            ArchArg::Mips => retroprof_heap::Arch::Mips,
            ArchArg::M68k => retroprof_heap::Arch::M68k,
        }
    }
}

/// `heap --folded-value`: the names of
/// [`retroprof_heap::output::HEAP_VALUE_TYPES`] (pprof's heap convention).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FoldedValueArg {
    /// Bytes allocated over the whole log.
    #[default]
    #[value(name = "alloc_space")]
    AllocSpace,
    /// Allocations over the whole log.
    #[value(name = "alloc_objects")]
    AllocObjects,
    /// Bytes in use at the end (or --at).
    #[value(name = "inuse_space")]
    InuseSpace,
    /// Blocks in use at the end (or --at).
    #[value(name = "inuse_objects")]
    InuseObjects,
}

impl FoldedValueArg {
    /// The index of this value type in
    /// [`retroprof_heap::output::HEAP_VALUE_TYPES`].
    pub fn index(self) -> usize {
        use clap::ValueEnum;
        let name = self.to_possible_value().expect("not skipped");
        retroprof_heap::output::HEAP_VALUE_TYPES
            .iter()
            .position(|(k, _)| *k == name.get_name())
            .expect("every --folded-value is a heap value type")
    }
}

/// `profile --sample-format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SampleFormatArg {
    /// The Petit Profiler's layout: a 64 KiB window of u16 counters (binary).
    #[default]
    Petit,
    /// `ADDRESS COUNT` text lines.
    Text,
}

impl SampleFormatArg {
    pub fn name(self) -> &'static str {
        match self {
            SampleFormatArg::Petit => "petit",
            SampleFormatArg::Text => "text",
        }
    }
}

/// `samples --hist-format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistFormatArg {
    /// The Petit Profiler's dump (131,072 bytes of u16 counters).
    #[value(alias = "petit-profiler", alias = "raw")]
    Petit,
    /// MS-DOS PROFIL .PRF.
    #[value(alias = "profil")]
    Prf,
    /// `ADDRESS COUNT` text lines.
    #[value(alias = "txt")]
    Text,
}

impl HistFormatArg {
    pub fn format(self) -> retroprof_samples::histogram::HistFormat {
        use retroprof_samples::histogram::HistFormat;
        match self {
            HistFormatArg::Petit => HistFormat::Petit,
            HistFormatArg::Prf => HistFormat::Prf,
            HistFormatArg::Text => HistFormat::Text,
        }
    }
}

/// `samples --map-format`: every
/// [`retroprof_samples::retroprof_symbols::maps::MapFormat`], by its name,
/// with the aliases `MapFormat::from_name` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapFormatArg(pub retroprof_samples::retroprof_symbols::maps::MapFormat);

impl MapFormatArg {
    fn aliases(self) -> &'static [&'static str] {
        use retroprof_samples::retroprof_symbols::maps::MapFormat as F;
        match self.0 {
            F::MsLink => &["ms-link", "link", "msvc"],
            F::Tlink => &["borland"],
            F::Watcom => &["wlink", "openwatcom"],
            F::GnuLd => &["gnuld", "ld", "gnu"],
            F::Nm => &[],
            F::Cc65Dbg => &["cc65dbg", "dbg", "cc65"],
            F::Cc65Map => &["ld65", "ld65-map"],
            F::Elf => &[],
        }
    }
}

impl clap::ValueEnum for MapFormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        use retroprof_samples::retroprof_symbols::maps::MapFormat as F;
        const V: [MapFormatArg; 8] = [
            MapFormatArg(F::MsLink),
            MapFormatArg(F::Tlink),
            MapFormatArg(F::Watcom),
            MapFormatArg(F::GnuLd),
            MapFormatArg(F::Nm),
            MapFormatArg(F::Cc65Dbg),
            MapFormatArg(F::Cc65Map),
            MapFormatArg(F::Elf),
        ];
        &V
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(
            clap::builder::PossibleValue::new(self.0.name())
                .help(self.0.signature())
                .aliases(self.aliases().iter().copied()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;
    use retroprof_samples::retroprof_symbols::maps::MapFormat;

    #[test]
    fn folded_values_are_the_heap_value_types() {
        let names: Vec<String> = FoldedValueArg::value_variants()
            .iter()
            .map(|v| v.to_possible_value().unwrap().get_name().to_string())
            .collect();
        let mut want: Vec<String> = retroprof_heap::output::HEAP_VALUE_TYPES
            .iter()
            .map(|(k, _)| k.to_string())
            .collect();
        let mut got = names.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        for v in FoldedValueArg::value_variants() {
            let i = v.index();
            assert_eq!(
                retroprof_heap::output::HEAP_VALUE_TYPES[i].0,
                v.to_possible_value().unwrap().get_name()
            );
        }
    }

    /// Every map format is offered, and every name and alias means to
    /// clap what it means to `MapFormat::from_name`.
    #[test]
    fn map_format_names_and_aliases() {
        assert_eq!(MapFormatArg::value_variants().len(), MapFormat::ALL.len());
        for f in MapFormat::ALL {
            assert!(MapFormatArg::value_variants().contains(&MapFormatArg(f)));
        }
        for v in MapFormatArg::value_variants() {
            for name in std::iter::once(v.0.name()).chain(v.aliases().iter().copied()) {
                assert_eq!(MapFormat::from_name(name), Some(v.0), "{name}");
                assert_eq!(MapFormatArg::from_str(name, false), Ok(*v), "{name}");
            }
        }
    }

    #[test]
    fn arch_and_hist_aliases_agree_with_the_libraries() {
        for v in ArchArg::value_variants() {
            let pv = v.to_possible_value().unwrap();
            for name in pv.get_name_and_aliases() {
                assert_eq!(retroprof_heap::Arch::parse(name), Some(v.arch()), "{name}");
            }
        }
        for v in HistFormatArg::value_variants() {
            let pv = v.to_possible_value().unwrap();
            for name in pv.get_name_and_aliases() {
                assert_eq!(
                    retroprof_samples::histogram::HistFormat::from_name(name),
                    Some(v.format()),
                    "{name}"
                );
            }
        }
        for v in SampleFormatArg::value_variants() {
            assert_eq!(
                retroprof_mdprof::sampler::parse_format(v.name())
                    .unwrap()
                    .name(),
                v.name()
            );
        }
    }
}
