//! Groups tokenized inputs into batches: padded ones of similar length for candle's models, and
//! ragged ones (sequences back to back) for the embedders' encoder, which attends per sequence.
//!
//! For padded batches, inputs are sorted by token count first so that a batch's padding
//! (computed for its longest member) is small: a batch mixing a 10-token query with a 256-token
//! passage would spend most of its attention and feed-forward work on padding.

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

/// Splits `sequences` (token ids, already truncated) into batches, shortest first, each
/// right-padded with `pad_id` to its own longest row. A batch has at most `max_rows` rows and at
/// most `max_tokens` padded tokens (unless a single sequence is longer), so batches of long
/// inputs get fewer rows and the model's intermediate tensors stay about the same size.
pub(crate) fn plan_batches(
    sequences: &[&[u32]],
    max_rows: usize,
    max_tokens: usize,
    pad_id: u32,
) -> Vec<Batch> {
    let mut order: Vec<usize> = (0..sequences.len()).collect();
    // Stable, so equal-length inputs keep their relative order and runs are reproducible.
    order.sort_by_key(|&i| sequences[i].len());

    let mut batches = Vec::new();
    let mut start = 0;
    while start < order.len() {
        // Lengths only grow along `order`, so the row being added is always the longest.
        let mut end = start + 1;
        while end < order.len()
            && end - start < max_rows
            && (end - start + 1) * sequences[order[end]].len() <= max_tokens
        {
            end += 1;
        }
        batches.push(pad_batch(sequences, &order[start..end], pad_id));
        start = end;
    }
    batches
}

/// Tokens one forward pass of the embedders' encoder takes. Batches run side by side on the
/// cores, each through every layer without waiting for the other's (against one batch of 4096
/// tokens at a time spread over both cores: a first index of jsquad-valid embedded in 5.8
/// instead of 6.2 s on 2 cores). Each batch in flight holds working buffers of about 14 KB a
/// token, 14 MB a batch.
pub(crate) const MAX_BATCH_TOKENS: usize = 1024;

/// Splits `sequences` into runs of consecutive sequences with at most `max_tokens` tokens in all
/// (a longer sequence makes a run of its own), in input order.
pub(crate) fn ragged_batches<'a>(
    sequences: &'a [&'a [u32]],
    max_tokens: usize,
) -> Vec<&'a [&'a [u32]]> {
    let mut batches = Vec::new();
    let (mut start, mut tokens) = (0, 0);
    for (end, sequence) in sequences.iter().enumerate() {
        if end > start && tokens + sequence.len() > max_tokens {
            batches.push(&sequences[start..end]);
            (start, tokens) = (end, 0);
        }
        tokens += sequence.len();
    }
    if start < sequences.len() {
        batches.push(&sequences[start..]);
    }
    batches
}

fn pad_batch(sequences: &[&[u32]], rows: &[usize], pad_id: u32) -> Batch {
    let seq_len = rows.iter().map(|&i| sequences[i].len()).max().unwrap_or(0);
    let mut ids = Vec::with_capacity(rows.len() * seq_len);
    let mut mask = Vec::with_capacity(rows.len() * seq_len);
    for &i in rows {
        let seq = sequences[i];
        let padding = seq_len - seq.len();
        ids.extend_from_slice(seq);
        ids.extend(std::iter::repeat_n(pad_id, padding));
        mask.extend(std::iter::repeat_n(1, seq.len()));
        mask.extend(std::iter::repeat_n(0, padding));
    }
    Batch {
        origins: rows.to_vec(),
        seq_len,
        ids,
        mask,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_length_and_pads_each_batch_to_its_longest_row() {
        let a: &[u32] = &[1, 2, 3, 4];
        let b: &[u32] = &[5];
        let c: &[u32] = &[6, 7];
        let batches = plan_batches(&[a, b, c], 2, 100, 0);
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
    fn long_rows_make_smaller_batches() {
        let short: &[u32] = &[1; 3];
        let long: &[u32] = &[2; 5];
        let batches = plan_batches(&[long, short, short, long, long], 8, 10, 0);
        let rows: Vec<Vec<usize>> = batches.iter().map(|b| b.origins.clone()).collect();
        // Two short rows fit in 10 tokens, a third long one would not; long rows go two by two.
        assert_eq!(rows, vec![vec![1, 2], vec![0, 3], vec![4]]);
        assert_eq!(batches[1].seq_len, 5);
    }

    #[test]
    fn a_sequence_longer_than_the_budget_gets_a_batch_of_its_own() {
        let long: &[u32] = &[7; 20];
        let batches = plan_batches(&[long, long], 8, 10, 0);
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0].ids, vec![7; 20]);
    }

    #[test]
    fn no_input_gives_no_batches() {
        assert!(plan_batches(&[], 32, 100, 0).is_empty());
        assert!(ragged_batches(&[], 100).is_empty());
    }

    #[test]
    fn ragged_batches_keep_order_within_the_token_budget() {
        let (a, b, c, d): (&[u32], &[u32], &[u32], &[u32]) = (&[1; 4], &[2; 5], &[3; 12], &[4; 1]);
        let sequences = [a, b, c, d];
        let batches = ragged_batches(&sequences, 10);
        assert_eq!(
            batches,
            vec![&sequences[..2], &sequences[2..3], &sequences[3..]]
        );
    }
}
