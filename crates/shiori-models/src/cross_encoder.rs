//! A cross-encoder reranker: a Hugging Face sequence-classification model (BERT, or XLM-RoBERTa
//! as bge-reranker uses) that reads query and passage as one sequence and outputs a relevance logit.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{linear, Linear, VarBuilder};
use candle_transformers::models::{bert, xlm_roberta};
use serde::Deserialize;
use shiori_core::{RerankError, Reranker};
use tokenizers::{EncodeInput, Tokenizer, TruncationParams, TruncationStrategy};

use crate::batching::{plan_batches, Batch};
use crate::ModelLoadError;

const MAX_BATCH_ROWS: usize = 16;
const MAX_BATCH_TOKENS: usize = 4096;
/// Longest pair scored; longer pairs lose tokens from their longer side first.
const MAX_PAIR_TOKENS: usize = 512;

/// The parts of `config.json` that pick the architecture and the head.
#[derive(Deserialize)]
struct HeadConfig {
    model_type: String,
    #[serde(default)]
    id2label: HashMap<String, String>,
    num_labels: Option<usize>,
    max_position_embeddings: usize,
    pad_token_id: usize,
}

enum Classifier {
    /// BERT, its pooler (dense + tanh on `[CLS]`) and the linear classifier.
    Bert {
        encoder: bert::BertModel,
        pooler: Linear,
        classifier: Linear,
    },
    XlmRoberta(xlm_roberta::XLMRobertaForSequenceClassification),
}

/// Scores (query, passage) pairs with a sequence-classification model from a folder holding
/// `config.json`, `model.safetensors` and `tokenizer.json`.
pub struct CrossEncoder {
    name: String,
    tokenizer: Tokenizer,
    classifier: Classifier,
    /// The logit that is the score: the only one, or the positive class's of two.
    label: usize,
    pad_id: u32,
}

impl CrossEncoder {
    pub fn load(dir: &Path) -> Result<Self, ModelLoadError> {
        let config_path = dir.join("config.json");
        let weights_path = dir.join("model.safetensors");
        let tokenizer_path = dir.join("tokenizer.json");
        let config_text = read(&config_path)?;
        let head: HeadConfig = serde_json::from_slice(&config_text)
            .map_err(|e| ModelLoadError::invalid(&config_path, e))?;
        let labels = head.num_labels.unwrap_or(match head.id2label.len() {
            0 => 2,
            n => n,
        });
        if !(1..=2).contains(&labels) {
            return Err(ModelLoadError::invalid(
                &config_path,
                format!("{labels} labels; a reranker has one score or two classes"),
            ));
        }

        let weights = read(&weights_path)?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| ModelLoadError::invalid(&weights_path, e))?;
        let bad_weights = |e: candle_core::Error| ModelLoadError::invalid(&weights_path, e);
        let bad_config = |e: serde_json::Error| ModelLoadError::invalid(&config_path, e);
        let (classifier, positions) = match head.model_type.as_str() {
            "bert" => {
                let config: bert::Config =
                    serde_json::from_slice(&config_text).map_err(bad_config)?;
                let base = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
                    vb.pp("bert")
                } else {
                    vb.clone()
                };
                let hidden = config.hidden_size;
                let classifier = Classifier::Bert {
                    encoder: bert::BertModel::load(base.clone(), &config).map_err(bad_weights)?,
                    pooler: linear(hidden, hidden, base.pp("pooler").pp("dense"))
                        .map_err(bad_weights)?,
                    classifier: linear(hidden, labels, vb.pp("classifier")).map_err(bad_weights)?,
                };
                (classifier, head.max_position_embeddings)
            }
            "xlm-roberta" | "roberta" => {
                let config: xlm_roberta::Config =
                    serde_json::from_slice(&config_text).map_err(bad_config)?;
                let model =
                    xlm_roberta::XLMRobertaForSequenceClassification::new(labels, &config, vb)
                        .map_err(bad_weights)?;
                // Positions start after the padding index.
                let usable = head
                    .max_position_embeddings
                    .saturating_sub(head.pad_token_id + 1);
                (Classifier::XlmRoberta(model), usable)
            }
            other => {
                return Err(ModelLoadError::invalid(
                    &config_path,
                    format!("model_type {other:?} is not supported (bert, xlm-roberta are)"),
                ))
            }
        };

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| ModelLoadError::invalid(&tokenizer_path, e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: positions.min(MAX_PAIR_TOKENS),
                strategy: TruncationStrategy::LongestFirst,
                ..TruncationParams::default()
            }))
            .map_err(|e| ModelLoadError::invalid(&tokenizer_path, e))?;
        let name = dir
            .file_name()
            .map(|n| format!("cross-encoder:{}", n.to_string_lossy()))
            .unwrap_or_else(|| "cross-encoder".to_string());
        Ok(CrossEncoder {
            name,
            tokenizer,
            classifier,
            label: labels - 1,
            pad_id: head.pad_token_id as u32,
        })
    }

    fn score_batch(&self, batch: &Batch, type_ids: &[u32]) -> candle_core::Result<Vec<f32>> {
        let shape = (batch.rows(), batch.seq_len);
        let ids = Tensor::from_slice(&batch.ids, shape, &Device::Cpu)?;
        let mask = Tensor::from_slice(&batch.mask, shape, &Device::Cpu)?;
        let types = Tensor::from_slice(type_ids, shape, &Device::Cpu)?;
        let logits = match &self.classifier {
            Classifier::Bert {
                encoder,
                pooler,
                classifier,
            } => {
                let hidden = encoder.forward(&ids, &types, Some(&mask))?;
                let first = hidden.get_on_dim(1, 0)?.contiguous()?;
                classifier.forward(&pooler.forward(&first)?.tanh()?)?
            }
            Classifier::XlmRoberta(model) => model.forward(&ids, &mask, &types)?,
        };
        logits.get_on_dim(1, self.label)?.to_vec1::<f32>()
    }
}

impl Reranker for CrossEncoder {
    fn name(&self) -> &str {
        &self.name
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
        let pairs: Vec<EncodeInput> = passages
            .iter()
            .map(|&passage| (query, passage).into())
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch(pairs, true)
            .map_err(|e| RerankError::Model(format!("{}: tokenizing: {e}", self.name)))?;
        let sequences: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();
        let mut scores = vec![0.0; passages.len()];
        for batch in plan_batches(&sequences, MAX_BATCH_ROWS, MAX_BATCH_TOKENS, self.pad_id) {
            let mut type_ids = Vec::with_capacity(batch.ids.len());
            for &origin in &batch.origins {
                let types = encodings[origin].get_type_ids();
                type_ids.extend_from_slice(types);
                type_ids.extend(std::iter::repeat_n(0, batch.seq_len - types.len()));
            }
            let batch_scores = self
                .score_batch(&batch, &type_ids)
                .map_err(|e| RerankError::Model(format!("{}: {e}", self.name)))?;
            for (&origin, score) in batch.origins.iter().zip(batch_scores) {
                scores[origin] = score;
            }
        }
        Ok(scores)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ModelLoadError> {
    std::fs::read(path).map_err(|source| ModelLoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}
