//! Counter-based random numbers: the value for (key, counter) is a pure function of both,
//! so every rank and device draws the same numbers for the same global index, whatever the
//! rank count. The mixer is SplitMix64's finaliser (Steele, Lea & Flood 2014), which passes
//! BigCrush when fed a Weyl sequence; here the Weyl sequence is indexed by the counter.

/// The Weyl increment: `draw` mixes key + (counter + 1)·GOLDEN.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 64 random bits for position `counter` of the stream named by `key`.
#[inline]
pub fn draw(key: u64, counter: u64) -> u64 {
    draw_at(key, weyl(counter))
}

/// The Weyl term of `counter`: `draw(key, counter)` = `draw_at(key, weyl(counter))`, so a
/// caller drawing one counter under many keys multiplies once.
#[inline]
pub fn weyl(counter: u64) -> u64 {
    counter.wrapping_add(1).wrapping_mul(GOLDEN)
}

/// `draw` from a counter's Weyl term.
#[inline]
pub fn draw_at(key: u64, weyl: u64) -> u64 {
    mix64(key.wrapping_add(weyl))
}

/// A stream key derived from a user seed and a purpose tag, so that different uses of the
/// same seed (edges, scrambling, roots) never share numbers.
pub fn stream_key(seed: u64, purpose: u64) -> u64 {
    mix64(mix64(seed ^ 0x7e55_e7a0_0000_0000) ^ purpose.wrapping_mul(GOLDEN))
}
