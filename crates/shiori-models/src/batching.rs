//! Groups tokenized inputs into padded batches of similar length.
//!
//! Inputs are sorted by token count before batching so that a batch's padding (computed for its
//! longest member) is small: a batch mixing a 10-token query with a 256-token passage would spend
//! most of its attention and feed-forward work on padding.

/// One batch ready for the model: row-major `[rows, seq_len]` token ids and attention mask.
#[derive(Debug, PartialEq)]
pub(crate) struct Batch {
    /// Position of each row in the caller's input, so results can be put back in order.
    pub origins: Vec<usize>,
    pub seq_len: usize,
    pub ids: Vec<u32>,
    pub mask: Vec<u32>,
}

impl Batch {
    pub fn rows(&self) -> usize {
        self.origins.len()
    }
}

/// Splits `sequences` (token ids, already truncated) into batches of at most `batch_size` rows,
/// shortest first, each right-padded with `pad_id` to its own longest row.
pub(crate) fn plan_batches(sequences: &[&[u32]], batch_size: usize, pad_id: u32) -> Vec<Batch> {
    let mut order: Vec<usize> = (0..sequences.len()).collect();
    // Stable, so equal-length inputs keep their relative order and runs are reproducible.
    order.sort_by_key(|&i| sequences[i].len());
    order
        .chunks(batch_size.max(1))
        .map(|chunk| {
            let seq_len = chunk
                .iter()
                .map(|&i| sequences[i].len())
                .max()
                .unwrap_or(0);
            let mut ids = Vec::with_capacity(chunk.len() * seq_len);
            let mut mask = Vec::with_capacity(chunk.len() * seq_len);
            for &i in chunk {
                let seq = sequences[i];
                let padding = seq_len - seq.len();
                ids.extend_from_slice(seq);
                ids.extend(std::iter::repeat_n(pad_id, padding));
                mask.extend(std::iter::repeat_n(1, seq.len()));
                mask.extend(std::iter::repeat_n(0, padding));
            }
            Batch {
                origins: chunk.to_vec(),
                seq_len,
                ids,
                mask,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_length_and_pads_each_batch_to_its_longest_row() {
        let a: &[u32] = &[1, 2, 3, 4];
        let b: &[u32] = &[5];
        let c: &[u32] = &[6, 7];
        let batches = plan_batches(&[a, b, c], 2, 0);
        assert_eq!(
            batches,
            vec![
                Batch {
                    origins: vec![1, 2],
                    seq_len: 2,
                    ids: vec![5, 0, 6, 7],
                    mask: vec![1, 0, 1, 1],
                },
                Batch {
                    origins: vec![0],
                    seq_len: 4,
                    ids: vec![1, 2, 3, 4],
                    mask: vec![1, 1, 1, 1],
                },
            ]
        );
    }

    #[test]
    fn no_input_gives_no_batches() {
        assert!(plan_batches(&[], 32, 0).is_empty());
    }
}
