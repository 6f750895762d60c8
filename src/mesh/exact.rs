//! Sums whose value does not depend on the order of their terms (threads, ranks): each term
//! is rounded to a multiple of 2^-32 and added as a 128-bit integer. The smoothers compare
//! and report such sums, so every rank count takes the same decisions.

const SCALE: f64 = 4294967296.0; // 2^32

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExactSum(pub i128);

impl ExactSum {
    pub fn of(value: f64) -> ExactSum {
        // Saturates for infinities (an inverted cell's deformation).
        ExactSum((value * SCALE).round() as i128)
    }

    pub fn plus(self, other: ExactSum) -> ExactSum {
        ExactSum(self.0.saturating_add(other.0))
    }

    pub fn value(self) -> f64 {
        self.0 as f64 / SCALE
    }

    /// As two words for an MPI reduction.
    pub fn to_words(self) -> [u64; 2] {
        [(self.0 >> 64) as u64, self.0 as u64]
    }

    pub fn from_words(w: [u64; 2]) -> ExactSum {
        ExactSum(((w[0] as i128) << 64) | w[1] as i128)
    }
}

impl std::iter::Sum for ExactSum {
    fn sum<I: Iterator<Item = ExactSum>>(iter: I) -> ExactSum {
        iter.fold(ExactSum::default(), ExactSum::plus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_does_not_matter_and_words_round_trip() {
        let values = [1e-3, 2.5e6, -7.25, 1.0 / 3.0, 1e9];
        let a: ExactSum = values.iter().map(|&v| ExactSum::of(v)).sum();
        let b: ExactSum = values.iter().rev().map(|&v| ExactSum::of(v)).sum();
        assert_eq!(a, b);
        assert_eq!(ExactSum::from_words(a.to_words()), a);
        let neg = ExactSum::of(-3.5);
        assert_eq!(ExactSum::from_words(neg.to_words()), neg);
        assert!((a.value() - values.iter().sum::<f64>()).abs() < 1e-6);
    }
}
