//! all-MiniLM-L6-v2 (a 6-layer BERT) on the crate's BERT encoder, its weights read with candle's
//! safetensors loader.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::bert::{Config, HiddenAct};
use serde::Deserialize;
use shiori_core::{EmbedError, Embedder};
use tokenizers::{Tokenizer, TruncationParams};

use crate::batching::{ragged_batches, MAX_BATCH_TOKENS};
use crate::bert::{BertEncoder, DenseWeights, LayerWeights, NormWeights, Precision};
use crate::pooling::normalise;
use rayon::prelude::*;

const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The part of sentence-transformers' `sentence_bert_config.json` that changes the output.
#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
}

/// Sentence embeddings from all-MiniLM-L6-v2 in a Hugging Face layout folder, computed as
/// sentence-transformers does: mean pooling over the tokens, then L2 normalisation.
pub struct MiniLmEmbedder {
    encoder: BertEncoder,
    /// `[vocabulary, hidden]` word vectors.
    words: Vec<f32>,
    /// `[positions, hidden]` position vectors with the (single used) token-type vector added.
    positions: Vec<f32>,
    tokenizer: Tokenizer,
    /// The same tokenizer without truncation, to count what a passage would lose.
    counter: Tokenizer,
    max_length: usize,
}

impl MiniLmEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `model_dir`, with the
    /// fastest arithmetic this CPU has ([`Precision::fastest`]).
    pub fn load(model_dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(model_dir, Precision::fastest())
    }

    pub fn load_with(model_dir: &Path, precision: Precision) -> Result<Self, EmbedError> {
        let config_path = model_dir.join("config.json");
        let tokenizer_path = model_dir.join("tokenizer.json");
        let weights_path = model_dir.join("model.safetensors");
        for path in [&config_path, &tokenizer_path, &weights_path] {
            if !path.is_file() {
                return Err(EmbedError::model_not_found(path.display().to_string()));
            }
        }

        let config: Config = read_json(&config_path)?;
        if config.hidden_act != HiddenAct::Gelu
            || config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(EmbedError::inference(format!(
                "{}: only BERT with erf GELU and whole attention heads is supported",
                config_path.display()
            )));
        }
        let max_length = max_sequence_length(model_dir, &config)?;

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| EmbedError::tokenizer(tokenizer_path.display().to_string()).because(e))?;
        // The shipped tokenizer.json pads everything to 128 and truncates at 128; batches here
        // are not padded, and truncation happens where sentence-transformers does it.
        tokenizer.with_padding(None);
        let mut counter = tokenizer.clone();
        counter
            .with_truncation(None)
            .map_err(|e| EmbedError::tokenizer("").because(e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::tokenizer("").because(e))?;

        let weights = SafeTensors::read(&weights_path)?;
        let h = config.hidden_size;
        let words = weights.get("embeddings.word_embeddings.weight", config.vocab_size * h)?;
        let token_type = weights.get(
            "embeddings.token_type_embeddings.weight",
            config.type_vocab_size * h,
        )?;
        let mut positions = weights.get(
            "embeddings.position_embeddings.weight",
            config.max_position_embeddings * h,
        )?;
        for row in positions.chunks_exact_mut(h) {
            row.iter_mut().zip(&token_type).for_each(|(p, t)| *p += t);
        }
        let layers = (0..config.num_hidden_layers)
            .map(|l| weights.layer(l, h, config.intermediate_size))
            .collect::<Result<_, _>>()?;
        let encoder = BertEncoder::new(
            config.num_attention_heads,
            config.layer_norm_eps as f32,
            weights.norm("embeddings.LayerNorm", h)?,
            layers,
            precision,
        );
        Ok(Self {
            encoder,
            words,
            positions,
            tokenizer,
            counter,
            max_length,
        })
    }

    fn embed_batch(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let h = self.encoder.hidden();
        let tokens: usize = sequences.iter().map(|s| s.len()).sum();
        let mut x = Vec::with_capacity(tokens * h);
        for sequence in sequences {
            for (position, &id) in sequence.iter().enumerate() {
                let word = self
                    .words
                    .get(id as usize * h..(id as usize + 1) * h)
                    .ok_or_else(|| {
                        EmbedError::inference(format!("token id {id} outside the vocabulary"))
                    })?;
                let position = &self.positions[position * h..(position + 1) * h];
                x.extend(word.iter().zip(position).map(|(w, p)| w + p));
            }
        }
        let lengths: Vec<usize> = sequences.iter().map(|s| s.len()).collect();
        let mut vectors = self.encoder.mean_vectors(x, &lengths);
        vectors.iter_mut().for_each(|v| normalise(v));
        Ok(vectors)
    }
}

impl Embedder for MiniLmEmbedder {
    fn model_id(&self) -> &str {
        MODEL_ID
    }

    fn dimension(&self) -> usize {
        self.encoder.hidden()
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch_fast(texts.to_vec(), true)
            .map_err(|e| EmbedError::tokenizer("").because(e))?;
        let sequences: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        // Batches run side by side, each on a core of its own where there are enough of them.
        let batches: Vec<Vec<Vec<f32>>> = ragged_batches(&sequences, MAX_BATCH_TOKENS)
            .par_iter()
            .map(|batch| self.embed_batch(batch))
            .collect::<Result<_, _>>()?;
        Ok(batches.into_iter().flatten().collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_passages(&[text])?
            .pop()
            .ok_or_else(|| EmbedError::inference("no vector for the query"))
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.counter.encode_fast(text, true).ok().map(|e| e.len())
    }

    /// Longer passages are truncated to this.
    fn max_tokens(&self) -> Option<usize> {
        Some(self.max_length)
    }
}

/// The tensors of a `model.safetensors` file, read as f32.
struct SafeTensors {
    path: String,
    tensors: HashMap<String, Tensor>,
}

impl SafeTensors {
    fn read(path: &Path) -> Result<Self, EmbedError> {
        let tensors = candle_core::safetensors::load(path, &Device::Cpu)
            .map_err(|e| inference_error(path, e))?;
        Ok(Self {
            path: path.display().to_string(),
            tensors,
        })
    }

    /// The tensor `name` (or `bert.name`, as some exports prefix it) flattened, which must hold
    /// `len` values.
    fn get(&self, name: &str, len: usize) -> Result<Vec<f32>, EmbedError> {
        let tensor = self
            .tensors
            .get(name)
            .or_else(|| self.tensors.get(&format!("bert.{name}")))
            .ok_or_else(|| EmbedError::inference(format!("{}: no tensor {name}", self.path)))?;
        let values = tensor
            .to_dtype(DType::F32)
            .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
            .map_err(|e| EmbedError::inference(format!("{}: {name}", self.path)).because(e))?;
        if values.len() != len {
            return Err(EmbedError::inference(format!(
                "{}: {name} has {} values, expected {len}",
                self.path,
                values.len()
            )));
        }
        Ok(values)
    }

    fn dense(&self, name: &str, outputs: usize, inputs: usize) -> Result<DenseWeights, EmbedError> {
        Ok(DenseWeights {
            weight: self.get(&format!("{name}.weight"), outputs * inputs)?,
            bias: self.get(&format!("{name}.bias"), outputs)?,
            outputs,
        })
    }

    fn norm(&self, name: &str, width: usize) -> Result<NormWeights, EmbedError> {
        Ok(NormWeights {
            gamma: self.get(&format!("{name}.weight"), width)?,
            beta: self.get(&format!("{name}.bias"), width)?,
        })
    }

    fn layer(&self, index: usize, h: usize, ffn: usize) -> Result<LayerWeights, EmbedError> {
        let name = |part: &str| format!("encoder.layer.{index}.{part}");
        let mut query_key_value = self.dense(&name("attention.self.query"), h, h)?;
        for part in ["key", "value"] {
            let more = self.dense(&name(&format!("attention.self.{part}")), h, h)?;
            query_key_value.weight.extend(more.weight);
            query_key_value.bias.extend(more.bias);
            query_key_value.outputs += h;
        }
        Ok(LayerWeights {
            query_key_value,
            attention_out: self.dense(&name("attention.output.dense"), h, h)?,
            attention_norm: self.norm(&name("attention.output.LayerNorm"), h)?,
            ffn_in: self.dense(&name("intermediate.dense"), ffn, h)?,
            ffn_out: self.dense(&name("output.dense"), h, ffn)?,
            output_norm: self.norm(&name("output.LayerNorm"), h)?,
        })
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
        .map_err(|e| EmbedError::model_not_found(path.display().to_string()).because(e))?;
    serde_json::from_str(&text).map_err(|e| inference_error(path, e))
}

fn inference_error(
    path: &Path,
    e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> EmbedError {
    EmbedError::inference(path.display().to_string()).because(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::{minilm, minilm_dir};
    use candle_nn::VarBuilder;
    use candle_transformers::models::bert::BertModel;

    /// Vectors from candle's `BertModel`, which this embedder ran on before the shared encoder,
    /// pooled one text at a time so that no padding is involved.
    fn candle_vectors(dir: &Path, texts: &[&str]) -> Vec<Vec<f32>> {
        let config: Config = read_json(&dir.join("config.json")).unwrap();
        // SAFETY: the test model's file is not written while the test maps it.
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(
                &[dir.join("model.safetensors")],
                DType::F32,
                &Device::Cpu,
            )
        }
        .unwrap();
        let model = BertModel::load(vb, &config).unwrap();
        texts
            .iter()
            .map(|text| {
                let ids = minilm().tokenizer.encode_fast(*text, true).unwrap();
                let ids = Tensor::new(ids.get_ids(), &Device::Cpu)
                    .unwrap()
                    .unsqueeze(0)
                    .unwrap();
                let hidden = model
                    .forward(&ids, &ids.zeros_like().unwrap(), None)
                    .unwrap();
                let mut mean = hidden
                    .mean(1)
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap();
                normalise(&mut mean);
                mean
            })
            .collect()
    }

    #[test]
    fn matches_candles_bert_exactly_in_f32_and_closely_in_bf16_and_int8() {
        let long =
            "The committee reviewed every expense report filed in the third quarter. ".repeat(30);
        let texts = [
            "How do I reset my password?",
            "Paris is the capital and most populous city of France.",
            "",
            long.as_str(),
        ];
        let reference = candle_vectors(&minilm_dir(), &texts);
        let f32_model = MiniLmEmbedder::load_with(&minilm_dir(), Precision::F32).unwrap();
        let exact = f32_model.embed_passages(&texts).unwrap();
        // f32 again on a CPU without AVX-512 BF16.
        let bf16 = Precision::Bf16.on_this_cpu();
        let bf16_model = MiniLmEmbedder::load_with(&minilm_dir(), bf16).unwrap();
        let rounded = bf16_model.embed_passages(&texts).unwrap();
        let int8_model = MiniLmEmbedder::load_with(&minilm_dir(), Precision::Int8).unwrap();
        let int8 = int8_model.embed_passages(&texts).unwrap();
        for (i, want) in reference.iter().enumerate() {
            let exact_cosine = dot(&exact[i], want);
            let rounded_cosine = dot(&rounded[i], want);
            let int8_cosine = dot(&int8[i], want);
            // The empty text, two tokens, is the worst: 0.996 on AVX-512 VNNI.
            assert!(int8_cosine > 0.995, "text {i}: int8 cosine {int8_cosine}");
            assert!(
                exact_cosine > 0.99999,
                "text {i}: f32 cosine {exact_cosine}"
            );
            assert!(
                rounded_cosine > 0.9999,
                "text {i}: {bf16:?} cosine {rounded_cosine}"
            );
        }
    }

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
