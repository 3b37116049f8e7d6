//! retroprof-heap
