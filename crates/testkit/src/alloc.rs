//! A counting global allocator for tests that bound memory.

/// A global allocator that counts live bytes, for tests that bound memory
/// on hostile input. Declare it in the test binary:
/// `#[global_allocator] static A: retroprof_testkit::CountingAlloc = retroprof_testkit::CountingAlloc;`
/// and measure with [`peak_during`].
pub struct CountingAlloc;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// The workspace denies unsafe code; a GlobalAlloc impl cannot be written
// without it. It only forwards to the system allocator and counts.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        let n = LIVE.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(n, Relaxed);
        std::alloc::System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        LIVE.fetch_sub(l.size(), std::sync::atomic::Ordering::Relaxed);
        std::alloc::System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new: usize) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        if new > l.size() {
            let n = LIVE.fetch_add(new - l.size(), Relaxed) + new - l.size();
            PEAK.fetch_max(n, Relaxed);
        } else {
            LIVE.fetch_sub(l.size() - new, Relaxed);
        }
        std::alloc::System.realloc(p, l, new)
    }
}

/// Runs `f` and returns its result with the peak bytes allocated while it
/// ran, above what was live before (meaningful only in a test binary whose
/// global allocator is [`CountingAlloc`], and with one such measurement at
/// a time).
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    use std::sync::atomic::Ordering::Relaxed;
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let out = f();
    (out, PEAK.load(Relaxed).saturating_sub(before))
}
