//! Dense layers over a handful of rows (a query's tokens) in f32 with AVX2 and FMA.
//!
//! `gemm` packs the whole weight matrix into panels on every call. That pays off for a batch of
//! passages, but a query has a dozen rows: packing doubled the memory traffic of a pass that is
//! nothing but streaming the weights once. This kernel reads each weight row once, straight from
//! where it is stored, and multiplies it into every input row while it sits in L1.

use rayon::prelude::*;
use std::arch::x86_64::{
    __m256, _mm256_castps256_ps128, _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_ps,
    _mm256_setzero_ps, _mm_add_ps, _mm_add_ss, _mm_cvtss_f32, _mm_movehdup_ps, _mm_movehl_ps,
};

/// At most this many rows take this kernel; more go through `gemm`, whose packing then pays.
/// (e5 query embedding p50 on AVX2: 14.3 ms at 16, 11.9 ms at 32, 11.6 ms at 64.)
pub(crate) const MAX_ROWS: usize = 32;
const LANES: usize = 8;
/// Input rows multiplied at once: with two weight rows, 8 accumulators, 2 weight registers and
/// one input register of the 16 AVX2 has.
const ROW_TILE: usize = 4;
/// Weight rows one rayon task multiplies: enough to outweigh the hand-off.
const OUTPUTS_PER_TASK: usize = 64;

/// Proof that the CPU has AVX2 and FMA: only [`NarrowKernel::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NarrowKernel(());

impl NarrowKernel {
    pub(crate) fn detect() -> Option<NarrowKernel> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
            .then_some(NarrowKernel(()))
    }

    /// `out = input · Wᵀ + bias` for at most [`MAX_ROWS`] rows of `inputs` values, where
    /// `weight` is row-major `[bias.len(), inputs]`. The weight rows are split among the rayon
    /// pool's threads.
    pub(crate) fn forward(
        self,
        weight: &[f32],
        bias: &[f32],
        input: &[f32],
        out: &mut [f32],
        inputs: usize,
    ) {
        let outputs = bias.len();
        let rows = input.len() / inputs.max(1);
        assert!(
            rows <= MAX_ROWS,
            "{rows} rows is too many for the narrow kernel"
        );
        assert_eq!(weight.len(), outputs * inputs);
        assert_eq!(input.len(), rows * inputs);
        assert_eq!(out.len(), rows * outputs);
        if rows == 0 {
            return;
        }
        // Computed per output (each output's rows side by side), so tasks write disjoint slices.
        let mut by_output = vec![0.0f32; outputs * rows];
        by_output
            .par_chunks_mut(OUTPUTS_PER_TASK * rows)
            .zip(weight.par_chunks(OUTPUTS_PER_TASK * inputs))
            .for_each(|(sums, weights)| self.multiply(weights, input, inputs, sums));
        for (row, out_row) in out.chunks_exact_mut(outputs).enumerate() {
            for ((value, bias), sums) in out_row
                .iter_mut()
                .zip(bias)
                .zip(by_output.chunks_exact(rows))
            {
                *value = bias + sums[row];
            }
        }
    }

    /// `sums[o * rows + r]` = weight row `o` · input row `r`, for every row of `weights`.
    fn multiply(self, weights: &[f32], input: &[f32], inputs: usize, sums: &mut [f32]) {
        let rows = input.len() / inputs;
        assert_eq!(weights.len() / inputs * rows, sums.len());
        for (pair, pair_sums) in weights.chunks(2 * inputs).zip(sums.chunks_mut(2 * rows)) {
            for (tile, tile_start) in (0..rows).step_by(ROW_TILE).enumerate() {
                let tile_rows = (rows - tile_start).min(ROW_TILE);
                let x = &input[tile_start * inputs..(tile_start + tile_rows) * inputs];
                let tile_sums = self.tile(pair, x, inputs);
                let first = tile * ROW_TILE;
                for (output, output_sums) in pair_sums.chunks_mut(rows).enumerate() {
                    output_sums[first..first + tile_rows]
                        .copy_from_slice(&tile_sums[output][..tile_rows]);
                }
            }
        }
    }

    /// The dot products of one or two weight rows with up to [`ROW_TILE`] input rows.
    fn tile(self, weights: &[f32], x: &[f32], inputs: usize) -> [[f32; ROW_TILE]; 2] {
        let mut sums = [[0.0; ROW_TILE]; 2];
        // SAFETY: `self` exists only where the CPU has AVX2 and FMA; each call's slices hold
        // exactly `O` weight rows and `R` input rows of `inputs` values (asserted inside).
        unsafe {
            match (weights.len() / inputs, x.len() / inputs) {
                (2, 4) => store(&mut sums, tile_dots::<2, 4>(weights, x, inputs)),
                (2, 3) => store(&mut sums, tile_dots::<2, 3>(weights, x, inputs)),
                (2, 2) => store(&mut sums, tile_dots::<2, 2>(weights, x, inputs)),
                (2, 1) => store(&mut sums, tile_dots::<2, 1>(weights, x, inputs)),
                (1, 4) => store(&mut sums, tile_dots::<1, 4>(weights, x, inputs)),
                (1, 3) => store(&mut sums, tile_dots::<1, 3>(weights, x, inputs)),
                (1, 2) => store(&mut sums, tile_dots::<1, 2>(weights, x, inputs)),
                (1, 1) => store(&mut sums, tile_dots::<1, 1>(weights, x, inputs)),
                shape => unreachable!("no tile of {shape:?} rows"),
            }
        }
        sums
    }
}

fn store<const O: usize, const R: usize>(into: &mut [[f32; ROW_TILE]; 2], sums: [[f32; R]; O]) {
    for (into, sums) in into.iter_mut().zip(sums) {
        into[..R].copy_from_slice(&sums);
    }
}

/// `O` weight rows times `R` input rows, each `inputs` long: `R × O` accumulators of 8 lanes,
/// then a scalar tail for the last `inputs % 8` values.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
unsafe fn tile_dots<const O: usize, const R: usize>(
    weights: &[f32],
    x: &[f32],
    inputs: usize,
) -> [[f32; R]; O] {
    assert_eq!(weights.len(), O * inputs);
    assert_eq!(x.len(), R * inputs);
    let mut accumulators = [[_mm256_setzero_ps(); O]; R];
    let full = inputs / LANES * LANES;
    for start in (0..full).step_by(LANES) {
        let mut w = [_mm256_setzero_ps(); O];
        for (o, w) in w.iter_mut().enumerate() {
            // SAFETY: o·inputs + start + 8 ≤ O·inputs = weights.len(), asserted above.
            *w = unsafe { _mm256_loadu_ps(weights.as_ptr().add(o * inputs + start)) };
        }
        for (r, row_accumulators) in accumulators.iter_mut().enumerate() {
            // SAFETY: r·inputs + start + 8 ≤ R·inputs = x.len(), asserted above.
            let xv = unsafe { _mm256_loadu_ps(x.as_ptr().add(r * inputs + start)) };
            for (accumulator, w) in row_accumulators.iter_mut().zip(&w) {
                *accumulator = _mm256_fmadd_ps(xv, *w, *accumulator);
            }
        }
    }
    let mut sums = [[0.0f32; R]; O];
    for (o, output_sums) in sums.iter_mut().enumerate() {
        for (r, sum) in output_sums.iter_mut().enumerate() {
            let tail: f32 = (full..inputs)
                .map(|i| weights[o * inputs + i] * x[r * inputs + i])
                .sum();
            *sum = horizontal_sum(accumulators[r][o]) + tail;
        }
    }
    sums
}

/// The sum of the 8 lanes.
#[target_feature(enable = "avx2,fma")]
fn horizontal_sum(v: __m256) -> f32 {
    let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
    _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::linear::reference_product;

    #[test]
    fn every_row_count_and_an_odd_output_count_match_the_plain_product() {
        let Some(kernel) = NarrowKernel::detect() else {
            panic!("this test needs AVX2 and FMA, which every CI machine of the project has");
        };
        // 131 outputs: an odd last pair and a task of 3 outputs; 45 inputs: a scalar tail.
        let (inputs, outputs) = (45, 131);
        let weight: Vec<f32> = (0..outputs * inputs)
            .map(|i| ((i * 7) % 19) as f32 / 8.0 - 1.0)
            .collect();
        let bias: Vec<f32> = (0..outputs).map(|i| i as f32 / 32.0).collect();
        for rows in 1..=MAX_ROWS {
            let input: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 5) % 11) as f32 / 4.0 - 1.0)
                .collect();
            let mut out = vec![f32::NAN; rows * outputs];
            kernel.forward(&weight, &bias, &input, &mut out, inputs);
            let expected = reference_product(&input, &weight, &bias, inputs);
            for (got, want) in out.iter().zip(&expected) {
                assert!((got - want).abs() < 1e-4, "{rows} rows: {got} vs {want}");
            }
        }
    }
}
