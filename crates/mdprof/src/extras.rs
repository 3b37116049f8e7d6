//! The observers that run beside the profiler when asked for: the heap
//! bridge ([`crate::heapbridge`], `--heap`), the PC sampler
//! ([`crate::sampler`], `--sample-histogram`) and the function tracer
//! ([`crate::trace`], `--trace-frames`), assembled in one place with the
//! run that drives them.
//!
//! With none of them, [`Extras::run`] is [`Session::run`]: the profiler
//! alone on its monomorphised 68000 core. With any of them, the three go
//! through [`Session::run_with_breakpoints`] as one `&mut dyn MdObserver`
//! (one dynamic call per event, no extra compiled core). What to do with
//! their results (files, terminal sections) is the caller's.

use crate::heapbridge::{HeapBridge, HeapBridgeError, HeapBridgeOptions};
use crate::report::Report;
use crate::sampler::{Sampler, SamplerError};
use crate::trace::FunctionTracer;
use crate::Session;

/// Which extra observers to run. The default runs none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtrasOptions {
    /// Run the heap bridge; `Some(true)` also keeps its event log for
    /// [`crate::heapbridge::HeapOutcome::write_log`].
    pub heap: Option<bool>,
    /// Sample the PC this many times per second of emulated time.
    pub sample_hz: Option<u64>,
    /// Trace every call and return of these frames (first, last;
    /// inclusive).
    pub trace_frames: Option<(u64, u64)>,
}

/// Why the extra observers could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ExtrasError {
    #[error(transparent)]
    Heap(#[from] HeapBridgeError),
    #[error(transparent)]
    Sampler(#[from] SamplerError),
}

/// The extra observers of one run (each `None` when not asked for).
pub struct Extras {
    pub heap: Option<HeapBridge>,
    pub sampler: Option<Sampler>,
    pub tracer: Option<FunctionTracer>,
}

impl Extras {
    /// Set up the observers `o` asks for, for session `s`'s ROM, symbols
    /// and region.
    pub fn new(s: &Session, o: &ExtrasOptions) -> Result<Extras, ExtrasError> {
        let heap = match o.heap {
            Some(keep_log) => Some(HeapBridge::new(
                &s.rom.data,
                &s.index,
                HeapBridgeOptions {
                    name: s.rom_label.clone(),
                    keep_log,
                    ..Default::default()
                },
            )?),
            None => None,
        };
        let sampler = match o.sample_hz {
            Some(hz) => {
                let mclk_hz = s.options.region.unwrap_or(s.rom.region()).mclk_hz();
                Some(Sampler::new(hz, mclk_hz)?)
            }
            None => None,
        };
        let tracer = o
            .trace_frames
            .map(|(a, b)| FunctionTracer::new(a, b, &s.rom.data));
        Ok(Extras {
            heap,
            sampler,
            tracer,
        })
    }

    /// No extra observer asked for.
    pub fn is_empty(&self) -> bool {
        self.heap.is_none() && self.sampler.is_none() && self.tracer.is_none()
    }

    /// Run session `s` with these observers beside the profiler (see the
    /// module's documentation for which path that takes).
    pub fn run(&mut self, s: &Session, progress: &mut dyn FnMut(u64, u64)) -> Report {
        if self.is_empty() {
            return s.run(progress);
        }
        let bp = self.heap.as_ref().map(|h| h.breakpoints().clone());
        let mut obs = (&mut self.heap, (&mut self.sampler, &mut self.tracer));
        s.run_with_breakpoints(&mut obs, bp, progress)
    }
}
