//! A deterministic synthetic allocation log, game-like: per frame a burst
//! of short-lived allocations, some long-lived ones, a slow leak. For the
//! benchmark example and tests.

use crate::event::{EventKind, HeapEvent};

/// Small xorshift generator (deterministic, no dependencies).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Generates about `events` alloc/free events (plus frame markers) with a
/// bump allocator over a 32 MB heap at 0x08800000 and 64 call sites.
pub fn game_like(events: u64, seed: u64) -> Vec<HeapEvent> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(events as usize + events as usize / 50);
    let mut live: Vec<(u64, u64)> = Vec::new(); // ptr, size
    let mut free_list: Vec<(u64, u64)> = Vec::new();
    let mut next = 0x0880_0000u64;
    let mut frame = 0;
    let mut n = 0;
    while n < events {
        frame += 1;
        out.push(HeapEvent::frame(frame));
        let burst = 20 + rng.below(40);
        for _ in 0..burst {
            if n >= events {
                break;
            }
            let free_now = !live.is_empty() && (rng.below(100) < 48 || live.len() > 20_000);
            if free_now {
                let i = rng.below(live.len() as u64) as usize;
                let (ptr, size) = live.swap_remove(i);
                let caller = 0x0896_0000 + rng.below(16) * 0x40;
                out.push(HeapEvent::free(ptr, caller));
                free_list.push((ptr, size));
            } else {
                let size = match rng.below(10) {
                    0..=5 => 4 + rng.below(60),
                    6..=8 => 64 + rng.below(1000),
                    _ => 1024 + rng.below(16384),
                };
                // First fit among the most recently freed blocks, else bump.
                let tail = free_list.len().saturating_sub(32);
                let fit = free_list[tail..]
                    .iter()
                    .position(|&(_, s)| s >= size)
                    .map(|i| i + tail);
                let ptr = match fit {
                    Some(i) if rng.below(4) != 0 => free_list.swap_remove(i).0,
                    _ => {
                        let p = next;
                        next += (size + 15) & !15;
                        p
                    }
                };
                let caller = 0x0895_0000 + rng.below(48) * 0x24;
                out.push(HeapEvent::alloc(size, ptr, caller));
                live.push((ptr, size));
            }
            n += 1;
        }
    }
    out
}

/// Writes events as the Daedalus tracker's lines (frame markers as
/// `Frame N`).
pub fn daedalus_text(events: &[HeapEvent]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::with_capacity(events.len() * 52);
    for e in events {
        let arr = if e.array { "[]" } else { "" };
        let _ = match e.kind {
            EventKind::Alloc { size, ptr, caller } => writeln!(
                out,
                "Allocating{arr} {size:>8} bytes - {ptr:08x} - RA is {caller:08x}"
            ),
            EventKind::Free { ptr, caller } => {
                writeln!(out, "Freeing{arr} {ptr:08x} - RA is {caller:08x}")
            }
            EventKind::Frame(n) => writeln!(out, "Frame {n}"),
        };
    }
    out
}

/// Writes events in the generic format (with its header line).
pub fn generic_text(events: &[HeapEvent], arch: Option<&str>) -> Vec<u8> {
    let mut w = crate::LogWriter::new(Vec::with_capacity(events.len() * 40), arch)
        .expect("writing to memory");
    for e in events {
        w.write(e).expect("writing to memory");
    }
    w.into_inner()
}
