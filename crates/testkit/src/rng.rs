//! A small fixed-seed generator for test campaigns, and the one way the
//! option-spec campaigns mutate a spec.

/// splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
/// generators", 2014), fixed seed: the same cases on every run.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }

    /// An option spec to parse: one time in three up to `max_random_len`
    /// random characters of `alphabet`, otherwise one of `seeds`; then up to
    /// two edits (insert, remove or replace one character from `alphabet`).
    pub fn mutated_spec(
        &mut self,
        seeds: &[&str],
        alphabet: &[char],
        max_random_len: u64,
    ) -> String {
        let a = alphabet.len() as u64;
        let mut spec: Vec<char> = if self.below(3) == 0 {
            (0..self.below(max_random_len))
                .map(|_| alphabet[self.below(a) as usize])
                .collect()
        } else {
            seeds[self.below(seeds.len() as u64) as usize]
                .chars()
                .collect()
        };
        for _ in 0..self.below(3) {
            let at = self.below(spec.len() as u64 + 1) as usize;
            match self.below(3) {
                0 => spec.insert(at, alphabet[self.below(a) as usize]),
                1 if at < spec.len() => {
                    spec.remove(at);
                }
                _ if at < spec.len() => spec[at] = alphabet[self.below(a) as usize],
                _ => {}
            }
        }
        spec.into_iter().collect()
    }
}
