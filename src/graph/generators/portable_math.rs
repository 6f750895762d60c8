//! ln and exp from IEEE additions, multiplications and divisions only, in an order that
//! kernels/generators.cu (`er_ln`, `er_exp`, compiled without FMA contraction) repeats
//! operation for operation: so the Erdős–Rényi split tree, whose hypergeometric draws use
//! them, comes out bit for bit the same on the host and on the GPU. The platforms' libms
//! differ in the last ulp (CUDA's `log` is within 1 ulp, glibc's within about 0.5), which
//! could move a draw whose uniform lies within 1e-16 of a boundary. Accuracy: a few ulps,
//! where the draws need 1e-14.

/// fdlibm's split of ln 2: the high part has 32 significant bits, so k·LN2_HI is exact for
/// any exponent k of an f64.
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;
const LOG2_E: f64 = std::f64::consts::LOG2_E;
const SQRT_2: f64 = std::f64::consts::SQRT_2;

/// 1/n!, n = 0..13: e^r to r^13 for |r| ≤ ln 2 / 2, the next term under 5e-18.
const INVERSE_FACTORIALS: [f64; 14] = [
    1.0,
    1.0,
    0.5,
    0.16666666666666666,
    0.041666666666666664,
    0.008333333333333333,
    0.001388888888888889,
    0.0001984126984126984,
    2.48015873015873e-05,
    2.7557319223985893e-06,
    2.755731922398589e-07,
    2.505210838544172e-08,
    2.08767569878681e-09,
    1.6059043836821613e-10,
];

/// 1/(2j + 1), j = 0..10: ln m = 2s Σ s^2j/(2j + 1), s = (m - 1)/(m + 1), |s| ≤ 0.172 for
/// m in [√2/2, √2], the next term under 3e-17.
const ODD_RECIPROCALS: [f64; 11] = [
    1.0,
    0.3333333333333333,
    0.2,
    0.14285714285714285,
    0.1111111111111111,
    0.09090909090909091,
    0.07692307692307693,
    0.06666666666666667,
    0.058823529411764705,
    0.05263157894736842,
    0.047619047619047616,
];

/// 2^k for k in -1022..=1023.
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// e^x.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.8 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let k = (x * LOG2_E + 0.5).floor();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = INVERSE_FACTORIALS[13];
    for &c in INVERSE_FACTORIALS[..13].iter().rev() {
        p = p * r + c;
    }
    // 2^k in two factors, each a normal number for every k here (-1075..=1024).
    let k = k as i64;
    let half = k / 2;
    p * pow2(half) * pow2(k - half)
}

/// ln x.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut bits, mut e) = (x.to_bits(), 0i64);
    if bits < 1 << 52 {
        // Subnormal: scaled by 2^54 into the normal range.
        bits = (x * 18014398509481984.0).to_bits();
        e = -54;
    }
    e += (bits >> 52) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    if m > SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = ODD_RECIPROCALS[10];
    for &c in ODD_RECIPROCALS[..10].iter().rev() {
        p = p * s2 + c;
    }
    let e = e as f64;
    e * LN2_HI + (e * LN2_LO + 2.0 * s * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within `ulps` units in the last place of `want`.
    fn close(got: f64, want: f64, ulps: f64) -> bool {
        (got - want).abs() <= ulps * f64::EPSILON * want.abs().max(f64::MIN_POSITIVE)
    }

    #[test]
    fn exp_and_ln_agree_with_the_platform_to_a_few_ulps() {
        let mut x = -745.0;
        while x < 709.0 {
            assert!(
                close(exp(x), x.exp(), 4.0),
                "exp({x}) = {} vs {}",
                exp(x),
                x.exp()
            );
            x += 0.0137;
        }
        for x in [-1e-300, -1e-12, 0.0, 1e-12, 0.3465, -0.3466] {
            assert!(close(exp(x), x.exp(), 2.0), "exp({x})");
        }
        let mut x = 1e-310;
        while x < 1e300 {
            assert!(
                close(ln(x), x.ln(), 4.0),
                "ln({x}) = {} vs {}",
                ln(x),
                x.ln()
            );
            x *= 1.0137;
        }
        for x in [1.0, 1.0 + 1e-15, 1.0 - 1e-15, SQRT_2, 2.0, 0.5, 1e-320] {
            assert!(close(ln(x), x.ln(), 4.0), "ln({x})");
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert!(ln(-1.0).is_nan() && ln(0.0) == f64::NEG_INFINITY && exp(-800.0) == 0.0);
    }
}
