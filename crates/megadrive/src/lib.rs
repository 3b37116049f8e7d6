//! retroprof-megadrive
