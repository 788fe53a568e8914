//! Multi-head self-attention over ragged batches: each sequence attends only to its own tokens,
//! so there is no padding to mask and none to compute.

use rayon::prelude::*;

use super::math::unnormalised_softmax_rows;

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
) {
    let head_dim = hidden / heads;
    let scale = 1.0 / (head_dim as f32).sqrt();
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
        let mut scores = vec![0f32; tokens * tokens];
        let mut inverse_sums = vec![0f32; tokens];
        for head in 0..heads {
            let query = qkv[head * head_dim..].as_ptr();
            let key = qkv[hidden + head * head_dim..].as_ptr();
            let value = qkv[2 * hidden + head * head_dim..].as_ptr();
            let stride = (3 * hidden) as isize;
            // SAFETY: `qkv` was sliced (bounds-checked) to this sequence's tokens × 3·hidden
            // values, and the query and key start at column head·head_dim (+ hidden) of the
            // first token, so `tokens` rows 3·hidden apart of head_dim values stay inside it
            // (head·head_dim + head_dim ≤ hidden); `scores` holds tokens × tokens values.
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
            // 2·hidden + head·head_dim of this sequence's `qkv` slice, so `tokens` rows 3·hidden
            // apart of head_dim values stay inside it; `context` holds tokens × hidden values
            // (`split_at_mut` above), and its head_dim columns from head·head_dim of `tokens`
            // rows `hidden` apart stay inside it. `context` is this task's alone.
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
    });
}
