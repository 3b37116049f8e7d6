//! retroprof-symbols
