//! Multi-head self-attention over ragged batches: each sequence attends only to its own tokens,
//! so there is no padding to mask and none to compute.

use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use super::attention_bf16;
use super::linear::Precision;
use super::math::unnormalised_softmax_rows;

/// The head width bfloat16 attention takes: both embedders' (384 values in 12 heads), one
/// panel of the bfloat16 kernel.
pub(crate) const BF16_HEAD_DIM: usize = 32;

/// The arithmetic of attention's two products.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arithmetic {
    F32,
    /// bfloat16 products summed in f32 ([`attention_bf16`]).
    #[cfg(target_arch = "x86_64")]
    Bf16,
}

impl Arithmetic {
    /// bfloat16 under int8 or bfloat16 dense layers where the CPU has AVX-512 BF16 and the
    /// heads are [`BF16_HEAD_DIM`] wide; f32 otherwise, so `precision = "f32"`
    /// stays f32 throughout.
    pub(crate) fn for_layers(precision: Precision, head_dim: usize) -> Arithmetic {
        #[cfg(target_arch = "x86_64")]
        if precision != Precision::F32 && head_dim == BF16_HEAD_DIM && super::bf16::supported() {
            return Arithmetic::Bf16;
        }
        let _ = (precision, head_dim);
        Arithmetic::F32
    }
}

/// Where each sequence's tokens start in a batch, plus the total at the end.
pub(crate) fn offsets(lengths: &[usize]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    let mut total = 0;
    offsets.push(0);
    for length in lengths {
        total += length;
        offsets.push(total);
    }
    offsets
}

/// `context = softmax(Q·Kᵀ / √d) · V` for every head of every sequence. `qkv` holds each
/// token's query, key and value projections side by side (`3 × hidden` per token); `context`
/// gets `hidden` per token, heads side by side.
pub(crate) fn attend(
    qkv: &[f32],
    offsets: &[usize],
    heads: usize,
    hidden: usize,
    context: &mut [f32],
    arithmetic: Arithmetic,
) {
    let mut per_sequence = Vec::with_capacity(offsets.len());
    let mut rest = context;
    for window in offsets.windows(2) {
        let (sequence, tail) = rest.split_at_mut((window[1] - window[0]) * hidden);
        per_sequence.push((window[0], sequence));
        rest = tail;
    }
    per_sequence.into_par_iter().for_each(|(start, context)| {
        let tokens = context.len() / hidden;
        let qkv = &qkv[start * 3 * hidden..(start + tokens) * 3 * hidden];
        match arithmetic {
            Arithmetic::F32 => attend_sequence(qkv, heads, hidden, context),
            // SAFETY: `Arithmetic::for_layers` chose bfloat16 only where the CPU has
            // AVX-512F and AVX-512 BF16.
            #[cfg(target_arch = "x86_64")]
            Arithmetic::Bf16 => unsafe {
                attention_bf16::attend_sequence(qkv, heads, hidden, context)
            },
        }
    });
}

/// [`attend`] for one sequence's `qkv` and `context`, in f32.
fn attend_sequence(qkv: &[f32], heads: usize, hidden: usize, context: &mut [f32]) {
    let head_dim = hidden / heads;
    let scale = 1.0 / (head_dim as f32).sqrt();
    let tokens = context.len() / hidden;
    // The raw pointers below rely on it.
    assert_eq!(
        qkv.len(),
        tokens * 3 * hidden,
        "qkv does not match the context"
    );
    let mut scores = vec![0f32; tokens * tokens];
    let mut inverse_sums = vec![0f32; tokens];
    for head in 0..heads {
        let query = qkv[head * head_dim..].as_ptr();
        let key = qkv[hidden + head * head_dim..].as_ptr();
        let value = qkv[2 * hidden + head * head_dim..].as_ptr();
        let stride = (3 * hidden) as isize;
        // SAFETY: `qkv` holds the sequence's tokens × 3·hidden values (asserted above), and
        // the query and key start at column head·head_dim (+ hidden) of the first token, so
        // `tokens` rows 3·hidden apart of head_dim values stay inside it (head·head_dim +
        // head_dim ≤ hidden); `scores` holds tokens × tokens values.
        unsafe {
            gemm::gemm(
                tokens,
                tokens,
                head_dim,
                scores.as_mut_ptr(),
                1,
                tokens as isize,
                false,
                query,
                1,
                stride,
                key,
                stride,
                1,
                0.0,
                scale,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
        unnormalised_softmax_rows(&mut scores, tokens, &mut inverse_sums);
        // SAFETY: `scores` holds tokens × tokens values; the value starts at column
        // 2·hidden + head·head_dim of `qkv`, so `tokens` rows 3·hidden apart of head_dim
        // values stay inside it; `context` holds at least tokens × hidden values (tokens =
        // its length / hidden), and its head_dim columns from head·head_dim of `tokens` rows
        // `hidden` apart stay inside it. `context` is this call's alone (`&mut`).
        unsafe {
            gemm::gemm(
                tokens,
                head_dim,
                tokens,
                context[head * head_dim..].as_mut_ptr(),
                1,
                hidden as isize,
                false,
                scores.as_ptr(),
                1,
                tokens as isize,
                value,
                1,
                stride,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
        // The softmax's division, on head_dim values a token instead of `tokens`.
        for (row, &inverse) in context.chunks_exact_mut(hidden).zip(&inverse_sums) {
            row[head * head_dim..(head + 1) * head_dim]
                .iter_mut()
                .for_each(|v| *v *= inverse);
        }
    }
}
