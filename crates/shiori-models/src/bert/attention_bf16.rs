//! Attention's two products in bfloat16 on AVX-512 BF16 (`vdpbf16ps`, two multiply-adds per
//! f32 lane and instruction), through the dense layers' panel kernel: a head's keys are the
//! columns of a weight (`Q·Kᵀ`), its values those of another (`P·V`), packed per head.
//!
//! Against f32 attention on `gemm`'s AVX-512 kernels, whose packing and short products
//! (32-wide heads) cost more than the arithmetic: a first index of jsquad-valid (int8 dense
//! layers, 2 cores, AMD Zen 5) 5.8–6.1 → 5.5 s; attention, softmax included, 26 % → 18 % of
//! the time; vectors within a cosine of 0.9998 of f32 ones (docs/benchmarks.md).

use super::bf16::{bf16_bits, Bf16Weights, PANEL};
use super::math::{exp, max};
use std::arch::x86_64::{
    __m512bh, __m512i, _mm512_cvtne2ps_pbh, _mm512_loadu_ps, _mm512_mul_ps, _mm512_set1_ps,
    _mm512_storeu_si512,
};

/// The head width the kernel takes: one panel of values' columns.
pub(crate) const HEAD_DIM: usize = super::attention::BF16_HEAD_DIM;
const _: () = assert!(HEAD_DIM == PANEL, "a head's values fill one panel");

/// `context = softmax(Q·Kᵀ / √d) · V` for every head of one sequence, as
/// [`super::attention::attend`] computes it in f32. `qkv` holds the sequence's tokens' query,
/// key and value projections side by side (`3 × hidden` a token), `context` gets `hidden` a
/// token. Panics unless `hidden` is `heads` × [`HEAD_DIM`] and both are sized to the same
/// tokens.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16 ([`super::bf16::supported`]).
#[target_feature(enable = "avx512f,avx512bf16")]
pub(crate) unsafe fn attend_sequence(
    qkv: &[f32],
    heads: usize,
    hidden: usize,
    context: &mut [f32],
) {
    assert_eq!(hidden, heads * HEAD_DIM, "heads are not {HEAD_DIM} wide");
    let tokens = context.len() / hidden;
    assert_eq!(
        context.len(),
        tokens * hidden,
        "context is not whole tokens"
    );
    assert_eq!(
        qkv.len(),
        tokens * 3 * hidden,
        "qkv does not match the context"
    );
    let pairs = HEAD_DIM / 2;
    // Keys are columns of whole panels, values' positions come in pairs: both padded with
    // zeros. A padding key scores −∞ and so weighs nothing (e^−87 after `exp`'s clamp).
    let padded = tokens.div_ceil(PANEL) * PANEL;
    let even = tokens.div_ceil(2) * 2;
    let key_bias: Vec<f32> = (0..padded)
        .map(|column| match column < tokens {
            true => 0.0,
            false => f32::NEG_INFINITY,
        })
        .collect();
    let no_bias = [0f32; HEAD_DIM];
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    let mut keys = Bf16Weights::zeroed(padded, HEAD_DIM);
    let mut values = Bf16Weights::zeroed(HEAD_DIM, even);
    let mut queries = vec![0u32; tokens * pairs];
    let mut scores = vec![0f32; tokens * padded];
    let mut inverse_sums = vec![0f32; tokens];
    let mut weights = vec![0u32; tokens * even / 2];
    let mut heads_context = vec![0f32; tokens * HEAD_DIM];
    for head in 0..heads {
        let projection = |token: usize, part: usize| {
            let start = token * 3 * hidden + part * hidden + head * HEAD_DIM;
            &qkv[start..start + HEAD_DIM]
        };
        for token in 0..tokens {
            // SAFETY: the caller vouched for the CPU features; a projection is HEAD_DIM long
            // and `queries` holds tokens × pairs words.
            unsafe {
                let query = rounded_pairs(projection(token, 0), scale);
                _mm512_storeu_si512(queries.as_mut_ptr().add(token * pairs).cast(), query);
                keys.set_column(token, rounded_pairs(projection(token, 1), 1.0));
            }
        }
        for pair in 0..tokens / 2 {
            let (first, second) = (projection(2 * pair, 2), projection(2 * pair + 1, 2));
            for ((word, &a), &b) in values
                .pair_of_columns(pair)
                .iter_mut()
                .zip(first)
                .zip(second)
            {
                *word = bf16_bits(a) | (bf16_bits(b) << 16);
            }
        }
        if tokens % 2 == 1 {
            let last = projection(tokens - 1, 2);
            for (word, &a) in values.pair_of_columns(tokens / 2).iter_mut().zip(last) {
                *word = bf16_bits(a);
            }
        }
        // SAFETY: the caller vouched for the CPU features `rows` needs; it asserts that the
        // biases and outputs cover its rows (tokens: `queries` holds tokens × pairs words).
        unsafe { keys.rows(&queries, &key_bias, &mut scores) };
        for ((row, words), inverse) in scores
            .chunks_exact(padded)
            .zip(weights.chunks_exact_mut(even / 2))
            .zip(&mut inverse_sums)
        {
            // SAFETY: the caller vouched for the CPU features; `row` is whole blocks (padded).
            *inverse = unsafe { softmax_weights(row, words) };
        }
        // SAFETY: as above; `weights` holds tokens × even / 2 words.
        unsafe { values.rows(&weights, &no_bias, &mut heads_context) };
        // The softmax's division, on HEAD_DIM values a token instead of `tokens`.
        for ((row, head_row), &inverse) in context
            .chunks_exact_mut(hidden)
            .zip(heads_context.chunks_exact(HEAD_DIM))
            .zip(&inverse_sums)
        {
            row[head * HEAD_DIM..(head + 1) * HEAD_DIM]
                .iter_mut()
                .zip(head_row)
                .for_each(|(c, v)| *c = v * inverse);
        }
    }
}

/// The softmax of `row` but for its division, as bfloat16 weights two a word: `words` gets
/// `e^(v − max)` of the row's first `2 · words.len()` values, and the result is 1 / the sum
/// over the whole row. One pass, where writing the exponentials back as f32 and rounding them
/// after took two more over the `tokens²` scores of every head.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16 ([`super::bf16::supported`]).
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn softmax_weights(row: &[f32], words: &mut [u32]) -> f32 {
    const BLOCK: usize = HEAD_DIM;
    assert!(
        row.len().is_multiple_of(BLOCK) && 2 * words.len() <= row.len(),
        "the row is not whole blocks, or shorter than the weights"
    );
    let max = max(row);
    // Sixteen partial sums, each taking its lane of one half-block and then of the other: the
    // order the f32 softmax sums in, so that both give the same weights.
    let mut partial = [0f32; BLOCK / 2];
    for (block, values) in row.chunks_exact(BLOCK).enumerate() {
        let mut powers = [0f32; BLOCK];
        for (power, &value) in powers.iter_mut().zip(values) {
            *power = exp(value - max);
        }
        for half in powers.chunks_exact(BLOCK / 2) {
            for (sum, &power) in partial.iter_mut().zip(half) {
                *sum += power;
            }
        }
        // SAFETY: `powers` is a head wide (BLOCK = HEAD_DIM); the caller vouched for the CPU.
        let rounded = unsafe { rounded_pairs(&powers, 1.0) };
        let first = block * BLOCK / 2;
        match first + BLOCK / 2 <= words.len() {
            // SAFETY: the 16 words from `first` lie inside `words`.
            true => unsafe { _mm512_storeu_si512(words.as_mut_ptr().add(first).cast(), rounded) },
            false if first < words.len() => {
                let mut tail = [0u32; BLOCK / 2];
                // SAFETY: `tail` holds 16 words.
                unsafe { _mm512_storeu_si512(tail.as_mut_ptr().cast(), rounded) };
                let rest = words.len() - first;
                words[first..].copy_from_slice(&tail[..rest]);
            }
            false => {}
        }
    }
    1.0 / partial.iter().fold(0.0, |total, &sum| total + sum)
}

// `bf16.rs`'s `round_to_bf16_pairs` does the same for the dense layers' inputs. Sharing this
// one from there made a first index of jsquad-valid 2–3 % slower in each of four alternating
// rounds (5.01 → 5.14 s in one), with the same code inlined: a layout effect, but a real one.
/// A head's [`HEAD_DIM`] values × `scale` rounded to bfloat16 (to nearest, ties to even), two
/// a word (the even position low), as one vector. Panics unless `values` is a head wide.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16 ([`super::bf16::supported`]).
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn rounded_pairs(values: &[f32], scale: f32) -> __m512i {
    assert_eq!(values.len(), HEAD_DIM, "not a head's values");
    let scale = _mm512_set1_ps(scale);
    // SAFETY: `values` holds 32 values.
    let (low, high) = unsafe {
        (
            _mm512_mul_ps(_mm512_loadu_ps(values.as_ptr()), scale),
            _mm512_mul_ps(_mm512_loadu_ps(values.as_ptr().add(16)), scale),
        )
    };
    let pairs = _mm512_cvtne2ps_pbh(high, low);
    // SAFETY: both are 512 bits of plain data.
    unsafe { std::mem::transmute::<__m512bh, __m512i>(pairs) }
}

#[cfg(test)]
mod tests {
    use super::super::attention::{attend, offsets, Arithmetic};
    use super::super::linear::Precision;
    use super::*;

    #[test]
    #[cfg_attr(
        not(host_runs_avx512bf16),
        ignore = "needs AVX-512 BF16; elsewhere attention runs in f32, which the other tests check"
    )]
    fn matches_f32_attention_within_bfloat16_rounding() {
        assert!(
            super::super::bf16::supported(),
            "built on a CPU with AVX-512 BF16 but running on one without: rebuild"
        );
        let (heads, hidden) = (2, 2 * HEAD_DIM);
        // One token, an odd count, one past a panel, and several panels' worth, side by side.
        let lengths = [1, 7, 33, 70];
        let tokens: usize = lengths.iter().sum();
        let value = |i: usize| ((i * 7919 + 13) % 1000) as f32 / 250.0 - 2.0;
        let qkv: Vec<f32> = (0..tokens * 3 * hidden).map(value).collect();
        let offsets = offsets(&lengths);
        let run = |arithmetic| {
            let mut context = vec![f32::NAN; tokens * hidden];
            attend(&qkv, &offsets, heads, hidden, &mut context, arithmetic);
            context
        };
        let (exact, rounded) = (run(Arithmetic::F32), run(Arithmetic::Bf16));
        let mut worst = 0f32;
        for (a, b) in exact.iter().zip(&rounded) {
            worst = worst.max((a - b).abs());
        }
        // Values lie in [−2, 2): the context is a weighted mean of them, its weights from
        // scores of 32 products each rounded to 8 significant bits.
        assert!(worst < 0.02, "largest difference {worst}");
    }

    #[test]
    fn only_int8_and_bf16_layers_on_32_wide_heads_take_bfloat16_attention() {
        assert_eq!(
            Arithmetic::for_layers(Precision::F32, HEAD_DIM),
            Arithmetic::F32
        );
        assert_eq!(Arithmetic::for_layers(Precision::Int8, 64), Arithmetic::F32);
        let expected = match super::super::bf16::supported() {
            true => Arithmetic::Bf16,
            false => Arithmetic::F32,
        };
        assert_eq!(Arithmetic::for_layers(Precision::Int8, HEAD_DIM), expected);
        assert_eq!(Arithmetic::for_layers(Precision::Bf16, HEAD_DIM), expected);
    }
}
