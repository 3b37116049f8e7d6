//! The replay's live set and its helpers: ordered pointers over a slab of
//! blocks, the recently-freed cache for double-free detection, and a fast
//! hasher for address keys.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

// A small multiplicative hasher for u64 keys (addresses): the std SipHash
// is needlessly slow here and HashDoS is not a concern for log replay.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        // Fold the well-mixed high half into the low bits, which hashbrown
        // uses for the bucket (addresses are multiples of 8 or 16).
        self.0 ^ (self.0 >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub(crate) size: u64,
    pub(crate) site: u32,
    pub(crate) event: u64,
    pub(crate) frame: u64,
    pub(crate) line: u64,
    pub(crate) array: bool,
}

/// The live set: ordered pointers (for overlap checks) over a slab of
/// blocks, so the B-tree moves 12-byte entries, not whole blocks.
#[derive(Default)]
pub(crate) struct LiveSet {
    pub(crate) map: BTreeMap<u64, u32>,
    pub(crate) slab: Vec<Block>,
    pub(crate) free: Vec<u32>,
}

impl LiveSet {
    #[inline]
    pub(crate) fn insert(&mut self, ptr: u64, b: Block) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = b;
                i
            }
            None => {
                self.slab.push(b);
                (self.slab.len() - 1) as u32
            }
        };
        if let Some(old) = self.map.insert(ptr, slot) {
            self.free.push(old);
        }
    }

    #[inline]
    pub(crate) fn remove(&mut self, ptr: u64) -> Option<Block> {
        let slot = self.map.remove(&ptr)?;
        self.free.push(slot);
        Some(self.slab[slot as usize])
    }

    /// The last block starting at or before `ptr` (`inclusive`) or before.
    #[inline]
    pub(crate) fn before(&self, ptr: u64, inclusive: bool) -> Option<(u64, Block)> {
        let r = if inclusive {
            self.map.range(..=ptr).next_back()
        } else {
            self.map.range(..ptr).next_back()
        };
        r.map(|(&p, &i)| (p, self.slab[i as usize]))
    }

    /// Pointers of blocks starting in `lo..hi`.
    #[inline]
    pub(crate) fn starting_in(&self, lo: u64, hi: u64, out: &mut Vec<u64>) {
        if lo < hi {
            out.extend(self.map.range(lo..hi).map(|(&p, _)| p));
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &Block)> + '_ {
        self.map.iter().map(|(&p, &i)| (p, &self.slab[i as usize]))
    }
}

/// Recently freed pointers, for telling a double free from a free of an
/// unknown pointer: a direct-mapped table of the last frees (bounded
/// memory; a pointer freed long ago may have been pushed out by another,
/// and a second free of it is then reported as unknown).
pub(crate) struct FreedCache {
    pub(crate) slots: Vec<(u64, u64)>, // (ptr + 1, line); 0 = empty
}

pub(crate) const FREED_CACHE_BITS: u32 = 16;

impl FreedCache {
    pub(crate) fn new() -> Self {
        FreedCache {
            slots: vec![(0, 0); 1 << FREED_CACHE_BITS],
        }
    }

    #[inline]
    pub(crate) fn slot(ptr: u64) -> usize {
        (ptr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FREED_CACHE_BITS)) as usize
    }

    #[inline]
    pub(crate) fn insert(&mut self, ptr: u64, line: u64) {
        self.slots[Self::slot(ptr)] = (ptr.wrapping_add(1), line);
    }

    #[inline]
    pub(crate) fn get(&self, ptr: u64) -> Option<u64> {
        let (p, line) = self.slots[Self::slot(ptr)];
        (p == ptr.wrapping_add(1)).then_some(line)
    }
}
