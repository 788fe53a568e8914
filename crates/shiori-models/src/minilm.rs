//! all-MiniLM-L6-v2 (a 6-layer BERT) run with candle on the CPU.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde::Deserialize;
use shiori_core::{EmbedError, Embedder};
use tokenizers::{Tokenizer, TruncationParams};

use crate::batching::{plan_batches, Batch};
use crate::pooling::mean_pool_normalised;

const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// Batch limits. Bigger batches amortise candle's per-op overhead, but a batch's tensors grow
/// with rows × padded length (attention with rows × length²); a token budget keeps them near
/// one size whatever the input length. Measured on msmarco passages (mean 81 word pieces) on 2
/// cores: 64 rows / 4,096 tokens beat a flat 16, 32 or 64 rows, mostly by spending less time
/// in the kernel faulting in freshly allocated pages.
const MAX_BATCH_ROWS: usize = 64;
const MAX_BATCH_TOKENS: usize = 4096;

/// The part of sentence-transformers' `sentence_bert_config.json` that changes the output.
#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
}

/// Sentence embeddings from all-MiniLM-L6-v2 in a Hugging Face layout folder, computed as
/// sentence-transformers does: mean pooling over the attention mask, then L2 normalisation.
pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    /// The same tokenizer without truncation, to count what a passage would lose.
    counter: Tokenizer,
    max_length: usize,
    pad_id: u32,
    dimension: usize,
}

impl MiniLmEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `model_dir`.
    pub fn load(model_dir: &Path) -> Result<Self, EmbedError> {
        let config_path = model_dir.join("config.json");
        let tokenizer_path = model_dir.join("tokenizer.json");
        let weights_path = model_dir.join("model.safetensors");
        for path in [&config_path, &tokenizer_path, &weights_path] {
            if !path.is_file() {
                return Err(EmbedError::ModelNotFound(path.display().to_string()));
            }
        }

        let config: Config = read_json(&config_path)?;
        let max_length = max_sequence_length(model_dir, &config)?;

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| EmbedError::Tokenizer(format!("{}: {e}", tokenizer_path.display())))?;
        // The shipped tokenizer.json pads everything to 128 and truncates at 128; we pad per
        // batch instead and truncate where sentence-transformers does.
        tokenizer.with_padding(None);
        let mut counter = tokenizer.clone();
        counter
            .with_truncation(None)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);

        let weights = std::fs::read(&weights_path)
            .map_err(|e| EmbedError::ModelNotFound(format!("{}: {e}", weights_path.display())))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| inference_error(&weights_path, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| inference_error(&weights_path, e))?;

        Ok(Self {
            model,
            tokenizer,
            counter,
            max_length,
            pad_id,
            dimension: config.hidden_size,
        })
    }

    fn embed_batch(&self, batch: &Batch) -> Result<Vec<Vec<f32>>, EmbedError> {
        let shape = (batch.rows(), batch.seq_len);
        let run = || -> candle_core::Result<Vec<f32>> {
            let ids = Tensor::from_slice(&batch.ids, shape, &Device::Cpu)?;
            let mask = Tensor::from_slice(&batch.mask, shape, &Device::Cpu)?;
            let token_types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &token_types, Some(&mask))?;
            hidden.flatten_all()?.to_vec1::<f32>()
        };
        let hidden = run().map_err(|e| EmbedError::Inference(e.to_string()))?;
        Ok(mean_pool_normalised(
            &hidden,
            &batch.mask,
            batch.seq_len,
            self.dimension,
        ))
    }
}

impl Embedder for MiniLmEmbedder {
    fn model_id(&self) -> &str {
        MODEL_ID
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch_fast(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let sequences: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        let batches = plan_batches(&sequences, MAX_BATCH_ROWS, MAX_BATCH_TOKENS, self.pad_id);

        // One batch at a time: candle already spreads each batch over every core (matmuls on
        // rayon, element-wise ops on its own thread pool), and running batches side by side on
        // top of that oversubscribes the cores and measured slower.
        let mut out = vec![Vec::new(); texts.len()];
        for batch in &batches {
            let vectors = self.embed_batch(batch)?;
            for (&origin, vector) in batch.origins.iter().zip(vectors) {
                out[origin] = vector;
            }
        }
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_passages(&[text])?
            .pop()
            .ok_or_else(|| EmbedError::Inference("no vector for the query".to_string()))
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.counter.encode_fast(text, true).ok().map(|e| e.len())
    }

    /// Longer passages are truncated to this.
    fn max_tokens(&self) -> Option<usize> {
        Some(self.max_length)
    }
}

/// sentence-transformers truncates at `max_seq_length` (256 for this model), not at the
/// position-embedding limit (512) nor at the tokenizer's own setting (128).
fn max_sequence_length(model_dir: &Path, config: &Config) -> Result<usize, EmbedError> {
    let path = model_dir.join("sentence_bert_config.json");
    if path.is_file() {
        let st: SentenceBertConfig = read_json(&path)?;
        Ok(st.max_seq_length.min(config.max_position_embeddings))
    } else {
        Ok(config.max_position_embeddings)
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, EmbedError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EmbedError::ModelNotFound(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| inference_error(path, e))
}

fn inference_error(path: &Path, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Inference(format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::minilm;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn similar_sentences_score_higher_than_unrelated_ones() {
        let model = minilm();
        let query = model.embed_query("How do I bake bread at home?").unwrap();
        let passages = model
            .embed_passages(&[
                "A simple recipe for baking a loaf of bread in your own kitchen.",
                "The stock market fell sharply after the central bank raised rates.",
            ])
            .unwrap();
        let related = dot(&query, &passages[0]);
        let unrelated = dot(&query, &passages[1]);
        assert!(
            related > unrelated + 0.3,
            "related {related}, unrelated {unrelated}"
        );
    }

    #[test]
    fn vectors_are_unit_length_with_the_model_dimension() {
        let model = minilm();
        let long = "word ".repeat(1000);
        let vectors = model.embed_passages(&["short", "", &long]).unwrap();
        assert_eq!(model.dimension(), 384);
        for vector in &vectors {
            assert_eq!(vector.len(), 384);
            let norm = dot(vector, vector).sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        }
    }

    #[test]
    fn batched_vectors_equal_one_by_one_vectors() {
        let model = minilm();
        let texts: Vec<String> = (0..40)
            .map(|i| format!("Sentence number {i} {}", "with more words ".repeat(i % 7)))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batched = model.embed_passages(&refs).unwrap();
        for (text, vector) in refs.iter().zip(&batched) {
            let single = model.embed_query(text).unwrap();
            let cosine = dot(&single, vector);
            assert!(cosine > 0.9999, "{text:?}: cosine {cosine}");
        }
    }

    #[test]
    fn truncates_at_256_word_pieces() {
        let model = minilm();
        let tokens_of = |text: &str| {
            model
                .tokenizer
                .encode_fast(text, true)
                .unwrap()
                .get_ids()
                .len()
        };
        assert_eq!(tokens_of(&"word ".repeat(1000)), 256);
        assert_eq!(tokens_of(&"word ".repeat(100)), 102);
        assert_eq!(model.count_tokens(&"word ".repeat(1000)), Some(1002));
        assert_eq!(model.max_tokens(), Some(256));
    }

    #[test]
    fn no_texts_give_no_vectors() {
        assert!(minilm().embed_passages(&[]).unwrap().is_empty());
    }

    #[test]
    fn missing_folder_names_the_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let Err(err) = MiniLmEmbedder::load(dir.path()) else {
            panic!("loaded a model from an empty folder");
        };
        assert!(err.to_string().contains("config.json"), "{err}");
    }
}
