//! The shadow call stack the profiler ([`crate::engine`]) and the tracer
//! ([`crate::trace`]) keep, one type with one set of rules, fed by the
//! 68000's call (JSR/BSR), return (RTS/RTR/RTE) and exception events.
//!
//! - An exception entry pushes a marker, so each interrupt level has its own
//!   part of the stack. An RTE (recognised by its opcode, 0x4E73, in ROM:
//!   [`is_rte`]) pops down to and including the top marker.
//! - RTS/RTR pop every call whose return slot lies at or below the new
//!   stack pointer (never a marker).
//! - A call first drops the calls whose slot lies at or below its own push:
//!   code that pops return addresses, `jmp`s out of functions or switches
//!   stacks resynchronises at the next call or return.
//! - The stack holds at most its capacity; deeper pushes are refused (the
//!   caller charges deeper calls to the deepest entry).

/// One entry: a call or an exception marker, with the owner's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry<T> {
    /// Stack pointer after the matching return (markers: 0).
    pub ret_sp: u32,
    pub exception: bool,
    pub data: T,
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct ShadowStack<T> {
    v: Vec<Entry<T>>,
    cap: usize,
}

/// Is the instruction at `pc` an RTE (ROM code only)?
pub(crate) fn is_rte(rom: &[u8], pc: u32) -> bool {
    let pc = (pc & 0xFF_FFFF) as usize;
    pc + 1 < rom.len() && rom[pc] == 0x4E && rom[pc + 1] == 0x73
}

impl<T: Copy> ShadowStack<T> {
    /// An empty stack of at most `cap` entries (allocated once).
    pub fn new(cap: usize) -> Self {
        ShadowStack {
            v: Vec::with_capacity(cap),
            cap,
        }
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_full(&self) -> bool {
        self.v.len() >= self.cap
    }

    pub fn top(&self) -> Option<&Entry<T>> {
        self.v.last()
    }

    /// The entries, outermost first.
    pub fn entries(&self) -> &[Entry<T>] {
        &self.v
    }

    /// Pop the top entry.
    pub fn pop(&mut self) -> Option<Entry<T>> {
        self.v.pop()
    }

    /// Pop calls (never a marker) while their `ret_sp <= sp`; `gone` gets
    /// each popped entry and the depth it had.
    #[inline]
    fn pop_calls_to(&mut self, sp: u32, gone: &mut impl FnMut(Entry<T>, usize)) {
        while let Some(&top) = self.v.last() {
            if !top.exception && top.ret_sp <= sp {
                self.v.pop();
                gone(top, self.v.len());
            } else {
                break;
            }
        }
    }

    /// A call pushed its return address at `sp`: drop the calls whose
    /// return slot is at or below it (through `gone`).
    pub fn drop_stale(&mut self, sp: u32, mut gone: impl FnMut(Entry<T>, usize)) {
        self.pop_calls_to(sp.wrapping_add(4), &mut gone);
    }

    /// Push a call whose return address was pushed at `sp`; false (and
    /// nothing pushed) when the stack is full.
    pub fn push_call(&mut self, sp: u32, data: T) -> bool {
        self.push(Entry {
            ret_sp: sp.wrapping_add(4),
            exception: false,
            data,
        })
    }

    /// Push an exception marker; false (and nothing pushed) when full.
    pub fn push_exception(&mut self, data: T) -> bool {
        self.push(Entry {
            ret_sp: 0,
            exception: true,
            data,
        })
    }

    fn push(&mut self, e: Entry<T>) -> bool {
        if self.is_full() {
            return false;
        }
        self.v.push(e);
        true
    }

    /// A return: an RTE (`rte`) pops down to and including the top marker;
    /// RTS/RTR with `sp` the stack pointer after it pops the calls whose
    /// slot lies at or below. `gone` gets each popped entry and its depth.
    pub fn ret(&mut self, rte: bool, sp: u32, mut gone: impl FnMut(Entry<T>, usize)) {
        if rte {
            while let Some(top) = self.v.pop() {
                gone(top, self.v.len());
                if top.exception {
                    break;
                }
            }
        } else {
            self.pop_calls_to(sp, &mut gone);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        let mut s: ShadowStack<u8> = ShadowStack::new(4);
        let mut gone = Vec::new();
        assert!(s.push_call(0x100, 1)); // returns to sp 0x104
        assert!(s.push_call(0xFC, 2)); // 0x100
        assert!(s.push_exception(3));
        assert!(s.push_call(0xF0, 4));
        assert!(!s.push_call(0xEC, 5), "full");
        // An RTS never pops the marker.
        s.ret(false, 0x200, |e, d| gone.push((e.data, d)));
        assert_eq!(gone, vec![(4, 3)]);
        // An RTE pops down to the marker.
        assert!(s.push_call(0xF0, 4));
        gone.clear();
        s.ret(true, 0, |e, d| gone.push((e.data, d)));
        assert_eq!(gone, vec![(4, 3), (3, 2)]);
        // A call at 0xFC drops the stale call whose slot is at 0xFC.
        gone.clear();
        s.drop_stale(0xFC, |e, d| gone.push((e.data, d)));
        assert_eq!(gone, vec![(2, 1)]);
        assert_eq!(s.len(), 1);
        let rom = [0u8, 0, 0x4E, 0x73];
        assert!(is_rte(&rom, 2) && !is_rte(&rom, 0) && !is_rte(&rom, 4));
    }
}
