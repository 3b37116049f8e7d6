//! retroprof-profile
