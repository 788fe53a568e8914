//! Element-wise kernels of the encoder: erf GELU, softmax and LayerNorm.
//!
//! The bodies are plain loops without calls or branches so that LLVM vectorises them, and
//! [`simd_versions!`] compiles each again with AVX-512 and with AVX2 enabled and picks the widest
//! copy the CPU runs: the workspace targets generic x86-64, where they would otherwise get 4-lane
//! SSE2 (and a libm call per value for `exp`'s rounding).

/// Lanes of the hand-split reductions: floating-point sums are only vectorised when written as
/// independent partial sums.
const LANES: usize = 16;

/// Defines each function three times, portable and compiled for AVX-512 and for AVX2, and calls
/// the widest copy the CPU has.
macro_rules! simd_versions {
    ($($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(-> $out:ty)? $body:block)*) => {$(
        $(#[$doc])*
        pub(crate) fn $name($($arg: $ty),*) $(-> $out)? {
            #[inline(always)]
            fn portable($($arg: $ty),*) $(-> $out)? $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,fma")]
            fn avx512($($arg: $ty),*) $(-> $out)? {
                portable($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2($($arg: $ty),*) $(-> $out)? {
                portable($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU was just checked for every feature `avx512` enables.
                return unsafe { avx512($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU was just checked for AVX2 and FMA.
                return unsafe { avx2($($arg),*) };
            }
            portable($($arg),*)
        }
    )*};
}

/// Adding this to a float of magnitude below 2²² rounds it to an integer (ties to even) held in
/// the low bits of the sum's mantissa: rounding and conversion without `as`, whose saturating
/// float-to-int semantics LLVM can only emit one lane at a time.
pub(crate) const ROUNDING_MAGIC: f32 = 12_582_912.0; // 1.5 · 2²³

/// `e^x` within 2 ulp on the range softmax and erf use, branch-free so it vectorises: `x` is split
/// into `n·ln 2 + r` with |r| ≤ ln 2 / 2, and `e^r` is a degree-6 Taylor polynomial.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * std::f32::consts::LOG2_E + ROUNDING_MAGIC;
    let n = shifted - ROUNDING_MAGIC;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // Horner's rule in fused multiply-adds (one instruction per step in the AVX copies).
    let p = [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0]
        .iter()
        .fold(1.0 / 720.0, |p: f32, &c| p.mul_add(r, c));
    // 2^n, built in the exponent bits: n + 127 lies in 1..=254 after the clamp, and sits in the
    // low byte of `shifted` + 127's bits, which the shift moves into the exponent.
    let scale = f32::from_bits((shifted + 127.0).to_bits() << 23);
    p * scale
}

/// The error function by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t * [1.421_413_7, -0.284_496_74, 0.254_829_6]
        .iter()
        .fold(1.061_405_4f32.mul_add(t, -1.453_152_1), |p: f32, &c| {
            p.mul_add(t, c)
        });
    (-poly).mul_add(exp(-a * a), 1.0).copysign(x)
}

simd_versions! {
    /// BERT's GELU, `x·Φ(x)` with the exact normal CDF (not the tanh approximation).
    fn gelu_in_place(values: &mut [f32]) {
        for v in values.iter_mut() {
            *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
        }
    }

    /// Softmax of each `width`-long row of `scores` in place, but for its division: each row
    /// becomes `e^(v − max)`, and `inverse_sums` gets 1 / the row's sum, for the caller to
    /// apply to the product of the row with the values (head-wide, not tokens-wide), which
    /// saves two passes over the scores.
    fn unnormalised_softmax_rows(scores: &mut [f32], width: usize, inverse_sums: &mut [f32]) {
        for (row, inverse) in scores.chunks_exact_mut(width).zip(inverse_sums.iter_mut()) {
            let max = max(row);
            *inverse = 1.0 / exp_and_sum(row, max);
        }
    }

    /// `x = LayerNorm(x + residual)` for each `gamma.len()`-wide row.
    fn add_and_normalise(
        x: &mut [f32],
        residual: Option<&[f32]>,
        gamma: &[f32],
        beta: &[f32],
        eps: f32
    ) {
        let width = gamma.len();
        for (row_index, row) in x.chunks_exact_mut(width).enumerate() {
            if let Some(residual) = residual {
                let added = &residual[row_index * width..(row_index + 1) * width];
                row.iter_mut().zip(added).for_each(|(v, r)| *v += r);
            }
            let mean = sum(row) / width as f32;
            row.iter_mut().for_each(|v| *v -= mean);
            let variance = sum_of_squares(row) / width as f32;
            let inverse_deviation = 1.0 / (variance + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = *v * inverse_deviation * g + b;
            }
        }
    }
}

/// Replaces each value of `row` by `e^(value − max)` and returns their sum, in one pass.
#[inline(always)]
fn exp_and_sum(row: &mut [f32], max: f32) -> f32 {
    let mut partial = [0f32; LANES];
    let mut chunks = row.chunks_exact_mut(LANES);
    for chunk in &mut chunks {
        for (p, v) in partial.iter_mut().zip(chunk) {
            *v = exp(*v - max);
            *p += *v;
        }
    }
    // The tail goes through a whole block too: one value at a time, `exp` is not vectorised,
    // and a 110-token row has a 14-value tail.
    let tail = chunks.into_remainder();
    let mut block = [max; LANES];
    block[..tail.len()].copy_from_slice(tail);
    for v in &mut block {
        *v = exp(*v - max);
    }
    tail.copy_from_slice(&block[..tail.len()]);
    partial.iter().fold(tail.iter().sum(), |a, &p| a + p)
}

#[inline(always)]
fn sum(values: &[f32]) -> f32 {
    fold_lanes(values, 0.0, |total, v| total + v, |a, b| a + b)
}

#[inline(always)]
pub(crate) fn sum_of_squares(values: &[f32]) -> f32 {
    fold_lanes(values, 0.0, |total, v| total + v * v, |a, b| a + b)
}

/// The largest value; a plain comparison, not `f32::max`, whose NaN rule costs a compare and a
/// blend per step (scores are never NaN).
#[inline(always)]
pub(crate) fn max(values: &[f32]) -> f32 {
    let larger = |a: f32, b: f32| if a > b { a } else { b };
    fold_lanes(values, f32::NEG_INFINITY, larger, larger)
}

/// Folds `values` with `step` in [`LANES`] independent partial results, then joins those with
/// `join`.
#[inline(always)]
pub(crate) fn fold_lanes(
    values: &[f32],
    init: f32,
    step: impl Fn(f32, f32) -> f32,
    join: impl Fn(f32, f32) -> f32,
) -> f32 {
    let mut partial = [init; LANES];
    let chunks = values.chunks_exact(LANES);
    let tail = chunks.remainder().iter().fold(init, |acc, &v| step(acc, v));
    for chunk in chunks {
        for (p, &v) in partial.iter_mut().zip(chunk) {
            *p = step(*p, v);
        }
    }
    partial.iter().fold(tail, |acc, &p| join(acc, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_the_standard_library() {
        for i in -2000..=2000 {
            let x = i as f32 / 25.0;
            let relative = (exp(x) - x.exp()).abs() / x.exp();
            assert!(relative < 1e-6, "exp({x}): {} vs {}", exp(x), x.exp());
        }
        assert_eq!(exp(-1000.0), exp(-87.0));
    }

    #[test]
    fn gelu_matches_the_erf_definition() {
        let inputs: Vec<f32> = (-800..=800).map(|i| i as f32 / 100.0).collect();
        let mut values = inputs.clone();
        gelu_in_place(&mut values);
        for (&x, &y) in inputs.iter().zip(&values) {
            let exact = 0.5 * f64::from(x) * (1.0 + libm_erf(f64::from(x) / 2f64.sqrt()));
            let tolerance = 1e-6 * (1.0 + f64::from(x.abs()));
            assert!(
                (f64::from(y) - exact).abs() < tolerance,
                "gelu({x}) = {y}, not {exact}"
            );
        }
    }

    /// erf in f64: its Taylor series near 0, 1 − erfc by a continued fraction further out.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        let value = if a < 2.5 {
            let (mut term, mut total) = (a, a);
            for n in 1..100 {
                term *= -a * a / n as f64;
                total += term / (2 * n + 1) as f64;
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            let fraction = (1..200).rev().fold(a, |k, n| a + n as f64 / 2.0 / k);
            1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * fraction)
        };
        value.copysign(x)
    }

    #[test]
    fn softmax_rows_sum_to_one_and_keep_order() {
        let mut scores = vec![1.0, 2.0, 3.0, -60.0, 0.0, 0.0];
        let mut inverse_sums = [0.0; 2];
        unnormalised_softmax_rows(&mut scores, 3, &mut inverse_sums);
        for (row, inverse) in scores.chunks_exact_mut(3).zip(inverse_sums) {
            row.iter_mut().for_each(|v| *v *= inverse);
        }
        assert!((scores[..3].iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(scores[0] < scores[1] && scores[1] < scores[2]);
        assert!(scores[3] < 1e-26);
        assert!((scores[4] - 0.5).abs() < 1e-6);
    }

    #[test]
    fn layer_norm_of_the_sum_has_zero_mean_and_unit_variance() {
        let mut x: Vec<f32> = (0..40).map(|i| i as f32).collect();
        let residual = vec![1.0; 40];
        add_and_normalise(&mut x, Some(&residual), &[1.0; 20], &[0.0; 20], 1e-12);
        for row in x.chunks_exact(20) {
            let mean = row.iter().sum::<f32>() / 20.0;
            let variance = row.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / 20.0;
            assert!(mean.abs() < 1e-5 && (variance - 1.0).abs() < 1e-4);
        }
        let mut shifted = vec![2.0, 4.0];
        add_and_normalise(&mut shifted, None, &[3.0, 3.0], &[1.0, 1.0], 0.0);
        assert_eq!(shifted, vec![-2.0, 4.0]);
    }
}
