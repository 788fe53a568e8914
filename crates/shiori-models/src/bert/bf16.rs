//! `input · Wᵀ + bias` in bfloat16 on AVX-512 BF16 (`vdpbf16ps`): two multiply-adds per f32
//! lane and instruction, accumulated in f32, twice the rate of f32 FMA.
//!
//! The weights are packed once at load into panels of [`PANEL`] output columns. Inside a panel,
//! each pair of input positions is one 32-bit word per column (the even position in the low
//! half), which is the operand layout `vdpbf16ps` multiplies; the input is rounded to bfloat16
//! per call, and a row-major bfloat16 row already pairs its positions that way.

use std::arch::x86_64::*;

use rayon::prelude::*;

/// Output columns per panel: two 16-lane registers.
pub(crate) const PANEL: usize = 32;
/// Rows a micro-kernel call computes: 2 × 8 accumulators plus operands fit the 32 registers.
const TILE_ROWS: usize = 8;
/// Rows a parallel task owns: its bfloat16 input (96 KB at 384 inputs) stays in L2 while every
/// panel streams past it.
const ROWS_PER_TASK: usize = 64;

/// Whether this CPU runs the kernel.
pub(crate) fn supported() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bf16")
}

pub(crate) struct Bf16Weights {
    packed: Vec<u32>,
    inputs: usize,
    outputs: usize,
}

impl Bf16Weights {
    /// Packs a row-major `[outputs, inputs]` weight; `None` when the shape does not fit the
    /// panels (outputs not a multiple of 32, or an odd number of inputs).
    pub fn pack(weight: &[f32], outputs: usize, inputs: usize) -> Option<Self> {
        if !outputs.is_multiple_of(PANEL)
            || !inputs.is_multiple_of(2)
            || weight.len() != outputs * inputs
        {
            return None;
        }
        let pairs = inputs / 2;
        let mut packed = Vec::with_capacity(outputs * pairs);
        for panel in 0..outputs / PANEL {
            for pair in 0..pairs {
                for column in panel * PANEL..(panel + 1) * PANEL {
                    let at = column * inputs + 2 * pair;
                    packed.push(bf16_pair(weight[at], weight[at + 1]));
                }
            }
        }
        Some(Self {
            packed,
            inputs,
            outputs,
        })
    }

    /// Panels of zeros for `outputs` columns of `inputs` positions, to be filled a word at a
    /// time ([`Bf16Weights::word`]). Panics unless `outputs` is a multiple of [`PANEL`] and
    /// `inputs` even.
    pub(crate) fn zeroed(outputs: usize, inputs: usize) -> Self {
        assert!(
            outputs.is_multiple_of(PANEL) && inputs.is_multiple_of(2),
            "{outputs} × {inputs} does not fit the panels"
        );
        Self {
            packed: vec![0; outputs * inputs / 2],
            inputs,
            outputs,
        }
    }

    /// Sets every word of `column` of a weight [`PANEL`] positions deep (16 words a column,
    /// one a pair of positions, the even position low) at once. Panics outside the shape.
    ///
    /// # Safety
    /// The CPU must have AVX-512F ([`supported`]).
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn set_column(&mut self, column: usize, words: __m512i) {
        assert!(
            self.inputs == PANEL && column < self.outputs,
            "not a column of a {PANEL}-deep weight"
        );
        let first = (column / PANEL) * (PANEL / 2) * PANEL + column % PANEL;
        // A column's words lie PANEL apart: its pairs' rows in the panel.
        let pair_rows = _mm512_mullo_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_epi32(PANEL as i32),
        );
        // SAFETY: column < outputs, so `first` + 15 · PANEL lies inside the `outputs / PANEL`
        // panels of 16 × PANEL words.
        unsafe {
            _mm512_i32scatter_epi32::<4>(
                self.packed.as_mut_ptr().add(first).cast(),
                pair_rows,
                words,
            )
        };
    }

    /// The words of every column of the one panel of a [`PANEL`]-wide weight that hold input
    /// positions `2·pair` and `2·pair + 1`, in column order. Panics unless the weight is one
    /// panel wide and `pair` inside it.
    pub(crate) fn pair_of_columns(&mut self, pair: usize) -> &mut [u32] {
        assert_eq!(self.outputs, PANEL, "not one panel wide");
        &mut self.packed[pair * PANEL..(pair + 1) * PANEL]
    }

    /// `out[r] = bias + input[r] · Wᵀ` for every row; `scratch` receives the rounded input.
    /// Panics unless `input` holds whole rows and `bias`, `out` and `scratch` are sized to
    /// them (`outputs`, rows × outputs and rows × inputs / 2 values).
    ///
    /// # Safety
    /// The CPU must have AVX-512F and AVX-512 BF16 ([`supported`]).
    pub unsafe fn matmul(&self, input: &[f32], bias: &[f32], out: &mut [f32], scratch: &mut [u32]) {
        let pairs = self.inputs / 2;
        let rows = input.len() / self.inputs;
        assert_eq!(input.len(), rows * self.inputs, "input is not whole rows");
        assert_eq!(bias.len(), self.outputs, "bias length");
        assert_eq!(out.len(), rows * self.outputs, "output length");
        assert_eq!(scratch.len(), rows * pairs, "scratch length");
        scratch
            .par_chunks_mut(ROWS_PER_TASK * pairs)
            .zip(input.par_chunks(ROWS_PER_TASK * self.inputs))
            .zip(out.par_chunks_mut(ROWS_PER_TASK * self.outputs))
            .for_each(|((rounded, input), out)| {
                // SAFETY: the caller vouched for the CPU features both kernels enable; each
                // checks the lengths it relies on.
                unsafe {
                    round_to_bf16_pairs(input, rounded);
                    self.rows(rounded, bias, out);
                }
            });
    }

    /// `out[r] = bias + input[r] · Wᵀ` for the `input.len() / (inputs / 2)` rows of paired
    /// bfloat16 `input`. Panics if `bias` or `out` is too short for them.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and AVX-512 BF16 ([`supported`]).
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(crate) unsafe fn rows(&self, input: &[u32], bias: &[f32], out: &mut [f32]) {
        let pairs = self.inputs / 2;
        let rows = input.len() / pairs;
        assert!(bias.len() >= self.outputs, "bias shorter than the outputs");
        assert!(
            out.len() >= rows * self.outputs,
            "output shorter than the rows"
        );
        // `pack` made `packed` `outputs / PANEL` panels of `pairs × PANEL` words.
        debug_assert_eq!(self.packed.len(), self.outputs * pairs);
        for panel in 0..self.outputs / PANEL {
            // SAFETY: panel < outputs / PANEL, so both offsets lie inside `packed` and `bias`
            // (at least `outputs` long, asserted above).
            let (weights, bias) = unsafe {
                (
                    self.packed.as_ptr().add(panel * pairs * PANEL),
                    bias.as_ptr().add(panel * PANEL),
                )
            };
            let mut row = 0;
            while row < rows {
                let tile_rows = (rows - row).min(TILE_ROWS);
                // SAFETY: row < rows, so the input offset lies inside `input` (rows × pairs
                // words) and the output offset inside `out` (rows × outputs, asserted above).
                let (a, c) = unsafe {
                    (
                        input.as_ptr().add(row * pairs),
                        out.as_mut_ptr().add(row * self.outputs + panel * PANEL),
                    )
                };
                let tile = Tile {
                    input: a,
                    pairs,
                    weights,
                    bias,
                    out: c,
                    out_stride: self.outputs,
                };
                // SAFETY: this function runs only with the CPU features `run` enables. The
                // tile's rows, row..row + tile_rows, lie inside `input` and `out`; its panel's
                // `pairs × PANEL` weights inside `packed` and its `PANEL` biases inside `bias`
                // (see above); nothing else reads or writes `out` meanwhile (`&mut`).
                unsafe {
                    match tile_rows {
                        8 => tile.run::<8>(),
                        7 => tile.run::<7>(),
                        6 => tile.run::<6>(),
                        5 => tile.run::<5>(),
                        4 => tile.run::<4>(),
                        3 => tile.run::<3>(),
                        2 => tile.run::<2>(),
                        _ => tile.run::<1>(),
                    }
                }
                row += tile_rows;
            }
        }
    }
}

/// One micro-kernel call: up to [`TILE_ROWS`] rows × one panel.
struct Tile {
    input: *const u32,
    pairs: usize,
    weights: *const u32,
    bias: *const f32,
    out: *mut f32,
    out_stride: usize,
}

impl Tile {
    /// `out[r][0..PANEL] = bias + input[r] · panel` for `ROWS` rows.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and AVX-512 BF16 ([`supported`]). `input` must be readable
    /// for `ROWS × pairs` words, `weights` for `pairs × PANEL` words and `bias` for `PANEL`
    /// values; `out` must be writable for `PANEL` values at the start of each of `ROWS` rows
    /// `out_stride` apart, and nothing else may access them during the call.
    #[target_feature(enable = "avx512f,avx512bf16")]
    unsafe fn run<const ROWS: usize>(&self) {
        // SAFETY: `bias` is readable for PANEL = 32 values (the caller's guarantee).
        let (bias_low, bias_high) = unsafe {
            (
                _mm512_loadu_ps(self.bias),
                _mm512_loadu_ps(self.bias.add(16)),
            )
        };
        let mut low = [bias_low; ROWS];
        let mut high = [bias_high; ROWS];
        for pair in 0..self.pairs {
            // SAFETY: pair < pairs, and `weights` is readable for pairs × PANEL words.
            let (w_low, w_high) = unsafe {
                let columns = self.weights.add(pair * PANEL);
                (
                    as_bf16(_mm512_loadu_si512(columns.cast())),
                    as_bf16(_mm512_loadu_si512(columns.add(16).cast())),
                )
            };
            for row in 0..ROWS {
                // SAFETY: row < ROWS and pair < pairs, inside the ROWS × pairs input words.
                let x = unsafe { *self.input.add(row * self.pairs + pair) };
                let x = as_bf16(_mm512_set1_epi32(x as i32));
                low[row] = _mm512_dpbf16_ps(low[row], x, w_low);
                high[row] = _mm512_dpbf16_ps(high[row], x, w_high);
            }
        }
        for row in 0..ROWS {
            // SAFETY: row < ROWS, and each row's first PANEL = 32 outputs are writable.
            unsafe {
                let out = self.out.add(row * self.out_stride);
                _mm512_storeu_ps(out, low[row]);
                _mm512_storeu_ps(out.add(16), high[row]);
            }
        }
    }
}

#[target_feature(enable = "avx512f,avx512bf16")]
fn as_bf16(bits: __m512i) -> __m512bh {
    // SAFETY: both are 512 bits of plain data.
    unsafe { std::mem::transmute(bits) }
}

/// Rounds `input` to bfloat16 (to nearest, ties to even) two values a word. Panics if `out`
/// has fewer than `input.len() / 2` words.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16 ([`supported`]).
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn round_to_bf16_pairs(input: &[f32], out: &mut [u32]) {
    assert!(
        out.len() >= input.len() / 2,
        "output shorter than the pairs"
    );
    let vectors = input.chunks_exact(32);
    let tail = vectors.remainder();
    for (values, words) in vectors.zip(out.chunks_exact_mut(16)) {
        // SAFETY: `values` holds exactly 32 values and `words` exactly 16 words.
        unsafe {
            let low = _mm512_loadu_ps(values.as_ptr());
            let high = _mm512_loadu_ps(values.as_ptr().add(16));
            let rounded = _mm512_cvtne2ps_pbh(high, low);
            _mm512_storeu_si512(
                words.as_mut_ptr().cast(),
                std::mem::transmute::<__m512bh, __m512i>(rounded),
            );
        }
    }
    let done = (input.len() - tail.len()) / 2;
    for (pair, word) in tail.chunks_exact(2).zip(&mut out[done..]) {
        *word = bf16_pair(pair[0], pair[1]);
    }
}

/// `value` rounded to bfloat16 (to nearest, ties to even), its bits in the low half: integer
/// arithmetic that vectorises where `half`'s conversion does not. Only for finite values (a
/// NaN may round to infinity).
#[inline(always)]
pub(crate) fn bf16_bits(value: f32) -> u32 {
    let bits = value.to_bits();
    bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16
}

fn bf16_pair(even: f32, odd: f32) -> u32 {
    let bits = |v: f32| u32::from(half::bf16::from_f32(v).to_bits());
    bits(even) | (bits(odd) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::linear::reference_product as f32_reference;

    #[test]
    #[cfg_attr(
        not(host_runs_avx512bf16),
        ignore = "needs AVX-512 BF16; on this CPU the f32 path runs and is what the other tests check"
    )]
    fn matches_f32_within_bfloat16_rounding() {
        assert!(
            supported(),
            "built on a CPU with AVX-512 BF16 but running on one without: rebuild"
        );
        let (rows, inputs, outputs) = (75, 70, 64);
        let value = |i: usize, salt: usize| ((i * 7919 + salt) % 1000) as f32 / 500.0 - 1.0;
        let input: Vec<f32> = (0..rows * inputs).map(|i| value(i, 3)).collect();
        let weight: Vec<f32> = (0..outputs * inputs).map(|i| value(i, 11)).collect();
        let bias: Vec<f32> = (0..outputs).map(|i| value(i, 5)).collect();
        let packed = Bf16Weights::pack(&weight, outputs, inputs).unwrap();
        let mut out = vec![0f32; rows * outputs];
        let mut scratch = vec![0u32; rows * inputs / 2];
        // SAFETY: `supported()` was asserted above.
        unsafe { packed.matmul(&input, &bias, &mut out, &mut scratch) };
        let expected = f32_reference(&input, &weight, &bias, inputs);
        for (i, (got, want)) in out.iter().zip(&expected).enumerate() {
            // 70 products of two values each rounded to 8 significant bits.
            assert!((got - want).abs() < 0.1, "element {i}: {got} vs {want}");
        }
        let error: f32 = out.iter().zip(&expected).map(|(a, b)| (a - b).abs()).sum();
        assert!(error / (out.len() as f32) < 0.02, "mean error {error}");
    }

    #[test]
    fn shapes_outside_the_panels_are_refused() {
        assert!(Bf16Weights::pack(&[0.0; 33 * 4], 33, 4).is_none());
        assert!(Bf16Weights::pack(&[0.0; 32 * 3], 32, 3).is_none());
        assert!(Bf16Weights::pack(&[0.0; 32 * 4], 32, 4).is_some());
    }

    #[test]
    fn bits_round_as_half_does() {
        for value in [
            1.0,
            -2.5,
            1.0 + 1.0 / 256.0,
            1.0 + 3.0 / 256.0,
            3.3e-5,
            -7.1e4,
            0.0,
        ] {
            assert_eq!(
                bf16_bits(value),
                u32::from(half::bf16::from_f32(value).to_bits()),
                "{value}"
            );
        }
    }

    #[test]
    fn pairs_round_to_nearest_even_with_the_even_position_low() {
        let one = 0x3F80u32;
        assert_eq!(bf16_pair(1.0, 2.0), one | (0x4000 << 16));
        // 1 + 2^-8 lies halfway between two bfloat16 values and rounds to the even one, 1.0.
        assert_eq!(bf16_pair(1.0 + 1.0 / 256.0, 0.0) & 0xFFFF, one);
    }
}
