//! retroprof-samples: program-counter histograms (PC-98 Petit Profiler,
//! MS-DOS PROFIL, text; and the Mega Drive emulator's sampler) matched
//! against linker maps into per-function profiles.
//!
//! ```no_run
//! use retroprof_samples::{histogram, symbolise, SymboliseOptions};
//! let map = retroprof_symbols::maps::load("prog.map".as_ref(), None).unwrap();
//! let bytes = std::fs::read("prog.log").unwrap();
//! let hist = histogram::read_petit("prog.log", &bytes, 0).unwrap();
//! let prof = symbolise(&hist, &map, &SymboliseOptions::default()).unwrap();
//! println!("{}", retroprof_samples::report::table(&prof, 20));
//! ```

pub mod histogram;
pub mod report;
pub mod symbolise;

pub use histogram::{write_petit, write_text, HistError, HistFormat, Histogram, ReadOptions};
pub use symbolise::{
    binomial_standard_error, binomial_standard_error_of, symbolise, FunctionStat, HotAddress,
    ModuleStat, SampleProfile, ShareCheck, SymboliseError, SymboliseOptions, Unattributed,
    UnattributedKind,
};

/// Re-exported so users (the CLI) need no direct dependency.
pub use retroprof_profile;
pub use retroprof_symbols;
