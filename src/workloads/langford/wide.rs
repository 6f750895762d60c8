//! Fixed-width wrap-around integers for Godfrey's sum: W little-endian 64-bit words, arithmetic
//! modulo 2^(64W), read as two's complement. Every product and partial sum may wrap; the final
//! total is exact whenever its true value fits in 64W bits (signed), which the caller ensures by
//! choosing W from n.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Wide<const W: usize>(pub [u64; W]);

impl<const W: usize> Default for Wide<W> {
    fn default() -> Self {
        Wide([0; W])
    }
}

impl<const W: usize> Wide<W> {
    pub fn from_i64(v: i64) -> Self {
        let mut w = [if v < 0 { u64::MAX } else { 0 }; W];
        w[0] = v as u64;
        Wide(w)
    }

    /// From words of any width: extra words are dropped (mod 2^(64W)), missing ones zero.
    pub fn from_words(words: &[u64]) -> Self {
        let mut w = [0; W];
        for (dst, src) in w.iter_mut().zip(words) {
            *dst = *src;
        }
        Wide(w)
    }

    pub fn wrapping_add(self, other: Self) -> Self {
        let mut out = [0; W];
        let mut carry = false;
        for ((o, a), b) in out.iter_mut().zip(self.0).zip(other.0) {
            let (s, c1) = a.overflowing_add(b);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *o = s;
            carry = c1 || c2;
        }
        Wide(out)
    }

    /// Product with a signed 64-bit factor, modulo 2^(64W).
    pub fn wrapping_mul_i64(self, f: i64) -> Self {
        // Multiply by |f| word by word, then negate if f < 0.
        let m = f.unsigned_abs();
        let mut out = [0; W];
        let mut carry: u128 = 0;
        for (o, a) in out.iter_mut().zip(self.0) {
            let t = u128::from(a) * u128::from(m) + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        let product = Wide(out);
        if f < 0 {
            product.wrapping_neg()
        } else {
            product
        }
    }

    pub fn wrapping_neg(self) -> Self {
        let mut inverted = self.0;
        for w in &mut inverted {
            *w = !*w;
        }
        Wide(inverted).wrapping_add(Wide::from_i64(1))
    }

    pub fn is_negative(&self) -> bool {
        self.0[W - 1] >> 63 == 1
    }

    /// Trailing zero bits (64W for zero).
    pub fn trailing_zeros(&self) -> u32 {
        let mut zeros = 0;
        for &w in &self.0 {
            if w != 0 {
                return zeros + w.trailing_zeros();
            }
            zeros += 64;
        }
        zeros
    }

    /// Logical shift right by `k` bits (k < 64W), reading the words as unsigned.
    pub fn shr(&self, k: u32) -> Self {
        let (skip, bits) = ((k / 64) as usize, k % 64);
        let word = |i: usize| self.0.get(i).copied().unwrap_or(0);
        let mut out = [0; W];
        for (i, o) in out.iter_mut().enumerate() {
            let lo = word(i + skip);
            *o = if bits == 0 {
                lo
            } else {
                (lo >> bits) | (word(i + skip + 1) << (64 - bits))
            };
        }
        Wide(out)
    }

    /// `self / 2^k` when 2^k divides it (read unsigned), else None (k < 64W).
    pub fn exact_shr(&self, k: u32) -> Option<Self> {
        // Zero has 64W trailing zeros, so it divides by every 2^k here.
        (self.trailing_zeros() >= k).then(|| self.shr(k))
    }

    /// The words read as an unsigned integer, in decimal.
    pub fn unsigned_decimal(&self) -> String {
        let mut words = self.0;
        // Repeated division by 10^19 (the largest power of ten in a u64).
        const CHUNK: u64 = 10_000_000_000_000_000_000;
        let mut chunks = Vec::new();
        while words.iter().any(|&w| w != 0) {
            let mut rem: u128 = 0;
            for w in words.iter_mut().rev() {
                let cur = (rem << 64) | u128::from(*w);
                *w = (cur / u128::from(CHUNK)) as u64;
                rem = cur % u128::from(CHUNK);
            }
            chunks.push(rem as u64);
        }
        match chunks.split_last() {
            None => "0".into(),
            Some((top, rest)) => {
                let mut s = top.to_string();
                for c in rest.iter().rev() {
                    s.push_str(&format!("{c:019}"));
                }
                s
            }
        }
    }
}

impl<const W: usize> fmt::Display for Wide<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_negative() {
            write!(f, "-{}", self.wrapping_neg().unsigned_decimal())
        } else {
            f.write_str(&self.unsigned_decimal())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_i128() {
        let values: [i128; 6] = [
            0,
            1,
            -1,
            123_456_789_012,
            -98_765_432_109_876,
            i64::MAX as i128,
        ];
        for &a in &values {
            for f in [-63i64, -1, 0, 1, 2, 62, i64::MAX] {
                let wide = Wide::<2>::from_words(&[a as u64, (a >> 64) as u64]);
                let got = wide.wrapping_mul_i64(f);
                let want = a.wrapping_mul(f as i128);
                assert_eq!(
                    got,
                    Wide::<2>::from_words(&[want as u64, (want >> 64) as u64])
                );
                assert_eq!(got.to_string(), want.to_string());
            }
        }
    }

    #[test]
    fn decimal_of_wide_values() {
        // 2^130 = 1361129467683753853853498429727072845824
        let mut x = Wide::<3>::from_i64(1);
        for _ in 0..130 {
            x = x.wrapping_mul_i64(2);
        }
        assert_eq!(x.to_string(), "1361129467683753853853498429727072845824");
        assert_eq!(x.trailing_zeros(), 130);
        assert_eq!(x.shr(129).to_string(), "2");
        assert_eq!(x.exact_shr(130), Some(Wide::from_i64(1)));
        assert_eq!(x.exact_shr(131), None);
        assert_eq!(Wide::<3>::default().exact_shr(65), Some(Wide::default()));
        assert_eq!(
            x.wrapping_neg().to_string(),
            "-1361129467683753853853498429727072845824"
        );
        // 2^128 - 1 does not fit a signed 128-bit value but reads back unsigned.
        let max = Wide::<2>::from_i64(-1);
        assert_eq!(max.unsigned_decimal(), u128::MAX.to_string());
        assert_eq!(max.shr(127).to_string(), "1");
        assert_eq!(Wide::<3>::default().to_string(), "0");
    }
}
