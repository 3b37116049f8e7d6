//! retroprof-samples
