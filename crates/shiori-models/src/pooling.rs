//! Sentence vectors from token vectors, as sentence-transformers' `Pooling` (mean) and
//! `Normalize` modules compute them.

/// Averages each row's token vectors over the tokens its attention mask keeps, then scales the
/// result to unit length.
///
/// `hidden` is row-major `[rows, seq_len, dim]`, `mask` is `[rows, seq_len]`. Padding must not
/// count: padded positions still get (meaningless) hidden states from the model.
pub(crate) fn mean_pool_normalised(
    hidden: &[f32],
    mask: &[u32],
    seq_len: usize,
    dim: usize,
) -> Vec<Vec<f32>> {
    let mut pooled = mean_pool(hidden, mask, seq_len, dim);
    pooled.iter_mut().for_each(|v| normalise(v));
    pooled
}

/// Each row's mean token vector over the tokens its mask keeps (see [`mean_pool_normalised`]).
pub(crate) fn mean_pool(hidden: &[f32], mask: &[u32], seq_len: usize, dim: usize) -> Vec<Vec<f32>> {
    hidden
        .chunks_exact(seq_len * dim)
        .zip(mask.chunks_exact(seq_len))
        .map(|(tokens, row_mask)| {
            let mut sum = vec![0f32; dim];
            let mut kept = 0f32;
            for (token, &m) in tokens.chunks_exact(dim).zip(row_mask) {
                if m != 0 {
                    kept += 1.0;
                    sum.iter_mut().zip(token).for_each(|(s, &t)| *s += t);
                }
            }
            // The same clamp as sentence-transformers (1e-9 on the token count), so a row with
            // no kept token gives zeros rather than NaN.
            let divisor = kept.max(1e-9);
            sum.iter_mut().for_each(|s| *s /= divisor);
            sum
        })
        .collect()
}

/// Scales `vector` to unit length (a zero vector stays zero: the norm is clamped at 1e-12).
pub(crate) fn normalise(vector: &mut [f32]) {
    let norm = vector.iter().map(|s| s * s).sum::<f32>().sqrt().max(1e-12);
    vector.iter_mut().for_each(|s| *s /= norm);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_positions_do_not_count() {
        // Two rows, seq_len 2, dim 2: the second row's padded token would tilt the mean.
        let hidden = [3.0, 4.0, 9.0, 9.0, 0.0, 2.0, 100.0, -100.0];
        let mask = [1, 1, 1, 0];
        let pooled = mean_pool_normalised(&hidden, &mask, 2, 2);
        let norm = (6.0f32 * 6.0 + 6.5 * 6.5).sqrt();
        let expected_first = [6.0 / norm, 6.5 / norm];
        assert!(pooled[0]
            .iter()
            .zip(expected_first)
            .all(|(a, b)| (a - b).abs() < 1e-4));
        assert_eq!(pooled[1], vec![0.0, 1.0]);
    }
}
