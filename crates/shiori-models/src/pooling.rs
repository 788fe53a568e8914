//! Sentence vectors from token vectors, as sentence-transformers' `Pooling` (mean) and
//! `Normalize` modules compute them.

/// Each sequence's mean token vector. `hidden` holds the token vectors (`dim` wide) of
/// sequences laid back to back with these `lengths`; an empty sequence gives zeros.
pub(crate) fn mean_pool(hidden: &[f32], lengths: &[usize], dim: usize) -> Vec<Vec<f32>> {
    let mut start = 0;
    lengths
        .iter()
        .map(|&length| {
            let tokens = &hidden[start * dim..(start + length) * dim];
            start += length;
            let mut sum = vec![0f32; dim];
            for token in tokens.chunks_exact(dim) {
                sum.iter_mut().zip(token).for_each(|(s, &t)| *s += t);
            }
            // The same clamp as sentence-transformers (1e-9 on the token count).
            let divisor = (length as f32).max(1e-9);
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
    fn each_sequence_averages_only_its_own_tokens() {
        // Two sequences of 1 and 2 tokens, dim 2, then an empty one.
        let hidden = [3.0, 4.0, 0.0, 2.0, 2.0, 4.0];
        let mut pooled = mean_pool(&hidden, &[1, 2, 0], 2);
        assert_eq!(pooled, vec![vec![3.0, 4.0], vec![1.0, 3.0], vec![0.0, 0.0]]);
        pooled.iter_mut().for_each(|v| normalise(v));
        assert_eq!(pooled[0], vec![0.6, 0.8]);
        assert_eq!(pooled[2], vec![0.0, 0.0]);
    }
}
