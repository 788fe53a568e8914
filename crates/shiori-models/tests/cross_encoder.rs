//! The cross-encoder on a tiny BERT written by the test (random weights, its own WordPiece
//! vocabulary), checked against a plain-Rust forward pass of the same weights.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};
use shiori_core::Reranker;
use shiori_models::{CrossEncoder, ModelLoadError};

const VOCAB: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "what", "where", "did", "the", "cat", "dog",
    "sit", "sat", "on", "a", "mat", "ran", "in", "park", "sun", "is", "hot", "?", ".",
];
const HIDDEN: usize = 8;
const HEADS: usize = 2;
const LAYERS: usize = 2;
const INTERMEDIATE: usize = 16;
const POSITIONS: usize = 32;
const EPS: f64 = 1e-12;

/// Deterministic weights in [-0.5, 0.5).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) - 0.5
    }

    fn take(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next()).collect()
    }
}

/// The weights, by their Hugging Face names, with their shapes.
struct Weights(HashMap<String, (Vec<usize>, Vec<f32>)>);

impl Weights {
    fn random(labels: usize) -> Weights {
        let mut rng = Lcg(7);
        let mut map = HashMap::new();
        let mut add = |name: String, shape: Vec<usize>, rng: &mut Lcg| {
            let n = shape.iter().product();
            map.insert(name, (shape, rng.take(n)));
        };
        let linear = |add: &mut dyn FnMut(String, Vec<usize>, &mut Lcg),
                      rng: &mut Lcg,
                      name: &str,
                      out: usize,
                      inp: usize| {
            add(format!("{name}.weight"), vec![out, inp], rng);
            add(format!("{name}.bias"), vec![out], rng);
        };
        let e = "bert.embeddings";
        add(
            format!("{e}.word_embeddings.weight"),
            vec![VOCAB.len(), HIDDEN],
            &mut rng,
        );
        add(
            format!("{e}.position_embeddings.weight"),
            vec![POSITIONS, HIDDEN],
            &mut rng,
        );
        add(
            format!("{e}.token_type_embeddings.weight"),
            vec![2, HIDDEN],
            &mut rng,
        );
        add(format!("{e}.LayerNorm.weight"), vec![HIDDEN], &mut rng);
        add(format!("{e}.LayerNorm.bias"), vec![HIDDEN], &mut rng);
        for layer in 0..LAYERS {
            let l = format!("bert.encoder.layer.{layer}");
            for part in ["query", "key", "value"] {
                linear(
                    &mut add,
                    &mut rng,
                    &format!("{l}.attention.self.{part}"),
                    HIDDEN,
                    HIDDEN,
                );
            }
            linear(
                &mut add,
                &mut rng,
                &format!("{l}.attention.output.dense"),
                HIDDEN,
                HIDDEN,
            );
            add(
                format!("{l}.attention.output.LayerNorm.weight"),
                vec![HIDDEN],
                &mut rng,
            );
            add(
                format!("{l}.attention.output.LayerNorm.bias"),
                vec![HIDDEN],
                &mut rng,
            );
            linear(
                &mut add,
                &mut rng,
                &format!("{l}.intermediate.dense"),
                INTERMEDIATE,
                HIDDEN,
            );
            linear(
                &mut add,
                &mut rng,
                &format!("{l}.output.dense"),
                HIDDEN,
                INTERMEDIATE,
            );
            add(
                format!("{l}.output.LayerNorm.weight"),
                vec![HIDDEN],
                &mut rng,
            );
            add(format!("{l}.output.LayerNorm.bias"), vec![HIDDEN], &mut rng);
        }
        linear(&mut add, &mut rng, "bert.pooler.dense", HIDDEN, HIDDEN);
        linear(&mut add, &mut rng, "classifier", labels, HIDDEN);
        Weights(map)
    }

    fn get(&self, name: &str) -> &[f32] {
        &self.0[name].1
    }

    /// Writes the weights under BERT's names, or XLM-RoBERTa's (same layers; its classification
    /// head is BERT's pooler and classifier under other names).
    fn save(&self, path: &Path, xlm_roberta: bool) {
        let rename = |name: &str| {
            if !xlm_roberta {
                name.to_string()
            } else if let Some(rest) = name.strip_prefix("bert.pooler.dense") {
                format!("classifier.dense{rest}")
            } else if let Some(rest) = name.strip_prefix("classifier") {
                format!("classifier.out_proj{rest}")
            } else {
                name.replacen("bert.", "roberta.", 1)
            }
        };
        let tensors: HashMap<String, Tensor> = self
            .0
            .iter()
            .map(|(name, (shape, data))| {
                let tensor = Tensor::from_slice(data, shape.as_slice(), &Device::Cpu).unwrap();
                (rename(name), tensor)
            })
            .collect();
        candle_core::safetensors::save(&tensors, path).unwrap();
    }

    /// `W x + b` for a weight stored `[out, in]`.
    fn linear(&self, name: &str, x: &[f32]) -> Vec<f32> {
        let w = self.get(&format!("{name}.weight"));
        let b = self.get(&format!("{name}.bias"));
        b.iter()
            .enumerate()
            .map(|(o, bias)| bias + (0..x.len()).map(|i| w[o * x.len() + i] * x[i]).sum::<f32>())
            .collect()
    }

    fn layer_norm(&self, name: &str, x: &[f32]) -> Vec<f32> {
        let n = x.len() as f64;
        let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
        let (g, b) = (
            self.get(&format!("{name}.weight")),
            self.get(&format!("{name}.bias")),
        );
        x.iter()
            .enumerate()
            .map(|(i, &v)| ((v as f64 - mean) / (var + EPS).sqrt()) as f32 * g[i] + b[i])
            .collect()
    }

    /// The classifier's logits for one unpadded sequence whose positions start at `first_position`
    /// (0 for BERT, after the padding index for XLM-RoBERTa).
    fn forward(&self, ids: &[usize], types: &[usize], first_position: usize) -> Vec<f32> {
        let row = |name: &str, index: usize| {
            self.get(&format!("bert.embeddings.{name}.weight"))
                [index * HIDDEN..(index + 1) * HIDDEN]
                .to_vec()
        };
        let mut x: Vec<Vec<f32>> = (0..ids.len())
            .map(|t| {
                let sum: Vec<f32> = (0..HIDDEN)
                    .map(|h| {
                        row("word_embeddings", ids[t])[h]
                            + row("position_embeddings", first_position + t)[h]
                            + row("token_type_embeddings", types[t])[h]
                    })
                    .collect();
                self.layer_norm("bert.embeddings.LayerNorm", &sum)
            })
            .collect();
        let head_dim = HIDDEN / HEADS;
        for layer in 0..LAYERS {
            let l = format!("bert.encoder.layer.{layer}");
            let project = |part: &str, x: &[Vec<f32>]| -> Vec<Vec<f32>> {
                x.iter()
                    .map(|v| self.linear(&format!("{l}.attention.self.{part}"), v))
                    .collect()
            };
            let (q, k, v) = (
                project("query", &x),
                project("key", &x),
                project("value", &x),
            );
            let mut context = vec![vec![0.0f32; HIDDEN]; x.len()];
            for head in 0..HEADS {
                let span = head * head_dim..(head + 1) * head_dim;
                for t in 0..x.len() {
                    let scores: Vec<f32> = (0..x.len())
                        .map(|s| {
                            span.clone().map(|d| q[t][d] * k[s][d]).sum::<f32>()
                                / (head_dim as f32).sqrt()
                        })
                        .collect();
                    let max = scores.iter().cloned().fold(f32::MIN, f32::max);
                    let exp: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
                    let total: f32 = exp.iter().sum();
                    for d in span.clone() {
                        context[t][d] = (0..x.len()).map(|s| exp[s] / total * v[s][d]).sum();
                    }
                }
            }
            x = x
                .iter()
                .zip(&context)
                .map(|(input, ctx)| {
                    let out = self.linear(&format!("{l}.attention.output.dense"), ctx);
                    let sum: Vec<f32> = out.iter().zip(input).map(|(a, b)| a + b).collect();
                    let attended =
                        self.layer_norm(&format!("{l}.attention.output.LayerNorm"), &sum);
                    let inner: Vec<f32> = self
                        .linear(&format!("{l}.intermediate.dense"), &attended)
                        .into_iter()
                        .map(gelu)
                        .collect();
                    let out = self.linear(&format!("{l}.output.dense"), &inner);
                    let sum: Vec<f32> = out.iter().zip(&attended).map(|(a, b)| a + b).collect();
                    self.layer_norm(&format!("{l}.output.LayerNorm"), &sum)
                })
                .collect();
        }
        let pooled: Vec<f32> = self
            .linear("bert.pooler.dense", &x[0])
            .into_iter()
            .map(f32::tanh)
            .collect();
        self.linear("classifier", &pooled)
    }
}

fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
fn erf(x: f32) -> f32 {
    let x = x as f64;
    let t = 1.0 / (1.0 + 0.3275911 * x.abs());
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let y = 1.0 - poly * (-x * x).exp();
    (if x < 0.0 { -y } else { y }) as f32
}

/// `[CLS] query [SEP] passage [SEP]` with token types, by looking words up in `VOCAB`.
fn pair_ids(query: &str, passage: &str) -> (Vec<usize>, Vec<usize>) {
    let id = |word: &str| VOCAB.iter().position(|v| *v == word).unwrap();
    let mut ids = vec![id("[CLS]")];
    ids.extend(query.split_whitespace().map(id));
    ids.push(id("[SEP]"));
    let first = ids.len();
    ids.extend(passage.split_whitespace().map(id));
    ids.push(id("[SEP]"));
    let types = (0..ids.len()).map(|i| usize::from(i >= first)).collect();
    (ids, types)
}

fn tokenizer_json() -> serde_json::Value {
    let vocab: serde_json::Map<String, serde_json::Value> = VOCAB
        .iter()
        .enumerate()
        .map(|(i, token)| (token.to_string(), i.into()))
        .collect();
    let added: Vec<serde_json::Value> = VOCAB[..5]
        .iter()
        .enumerate()
        .map(|(i, token)| {
            serde_json::json!({"id": i, "content": token, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
            "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab}
    })
}

fn write_model(dir: &Path, labels: usize) -> Weights {
    write_model_of(dir, labels, "bert")
}

fn write_model_of(dir: &Path, labels: usize, model_type: &str) -> Weights {
    let id2label: serde_json::Map<String, serde_json::Value> = (0..labels)
        .map(|i| (i.to_string(), format!("LABEL_{i}").into()))
        .collect();
    let config = serde_json::json!({
        "architectures": ["BertForSequenceClassification"],
        "model_type": model_type,
        "vocab_size": VOCAB.len(),
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTERMEDIATE,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": EPS,
        "pad_token_id": 0,
        "classifier_dropout": null,
        "position_embedding_type": "absolute",
        "id2label": id2label,
    });
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json().to_string()).unwrap();
    let weights = Weights::random(labels);
    weights.save(&dir.join("model.safetensors"), model_type == "xlm-roberta");
    weights
}

const QUERY: &str = "where did the cat sit ?";
const PASSAGES: &[&str] = &[
    "the cat sat on the mat .",
    "a dog ran in the park .",
    "the sun is hot .",
    "cat",
];

#[test]
fn scores_match_a_plain_forward_pass_with_one_or_two_labels() {
    for labels in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let weights = write_model(dir.path(), labels);
        let reranker: Box<dyn Reranker> = Box::new(CrossEncoder::load(dir.path()).unwrap());
        let scores = reranker.score(QUERY, PASSAGES).unwrap();
        assert_eq!(scores.len(), PASSAGES.len());
        for (passage, score) in PASSAGES.iter().zip(&scores) {
            let (ids, types) = pair_ids(QUERY, passage);
            let expected = *weights.forward(&ids, &types, 0).last().unwrap();
            assert!(
                (score - expected).abs() < 1e-4,
                "{labels} label(s), {passage:?}: {score} vs {expected}"
            );
        }
        // Random weights still give each passage its own score.
        assert!(
            scores.windows(2).all(|w| (w[0] - w[1]).abs() > 1e-6),
            "{scores:?}"
        );
    }
}

#[test]
fn xlm_roberta_scores_match_the_same_forward_pass() {
    let dir = tempfile::tempdir().unwrap();
    let weights = write_model_of(dir.path(), 1, "xlm-roberta");
    let reranker = CrossEncoder::load(dir.path()).unwrap();
    let scores = reranker.score(QUERY, PASSAGES).unwrap();
    for (passage, score) in PASSAGES.iter().zip(&scores) {
        let (ids, types) = pair_ids(QUERY, passage);
        // Padding index 0, so positions start at 1.
        let expected = weights.forward(&ids, &types, 1)[0];
        assert!(
            (score - expected).abs() < 1e-4,
            "{passage:?}: {score} vs {expected}"
        );
    }
}

#[test]
fn scores_do_not_depend_on_batching_or_order() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path(), 1);
    let reranker = CrossEncoder::load(dir.path()).unwrap();
    let together = reranker.score(QUERY, PASSAGES).unwrap();
    assert_eq!(together, reranker.score(QUERY, PASSAGES).unwrap());
    for (passage, score) in PASSAGES.iter().zip(&together) {
        let alone = reranker.score(QUERY, &[passage]).unwrap()[0];
        assert!(
            (alone - score).abs() < 1e-5,
            "{passage:?}: {alone} vs {score}"
        );
    }
    let reversed: Vec<&str> = PASSAGES.iter().rev().copied().collect();
    let mut back = reranker.score(QUERY, &reversed).unwrap();
    back.reverse();
    for (a, b) in back.iter().zip(&together) {
        assert!((a - b).abs() < 1e-5, "{back:?} vs {together:?}");
    }
    assert!(reranker.score(QUERY, &[]).unwrap().is_empty());
    assert!(reranker.name().starts_with("cross-encoder:"));
}

#[test]
fn long_pairs_are_truncated_to_the_position_table() {
    let dir = tempfile::tempdir().unwrap();
    write_model(dir.path(), 1);
    let reranker = CrossEncoder::load(dir.path()).unwrap();
    let long = "the cat sat on the mat . ".repeat(20);
    let scores = reranker.score(QUERY, &[&long, PASSAGES[0]]).unwrap();
    assert!(scores.iter().all(|s| s.is_finite()), "{scores:?}");
}

#[test]
fn load_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = CrossEncoder::load(&dir.path().join("nowhere"))
        .err()
        .unwrap();
    assert!(matches!(err, ModelLoadError::Io { .. }));
    assert!(err.to_string().contains("config.json"), "{err}");

    let model = dir.path().join("model");
    write_model(&model, 1);
    let expect_error = |file: &str, contents: Option<&str>| {
        let broken = dir.path().join(format!("broken-{file}"));
        write_model(&broken, 1);
        match contents {
            Some(text) => std::fs::write(broken.join(file), text).unwrap(),
            None => std::fs::remove_file(broken.join(file)).unwrap(),
        }
        let err = CrossEncoder::load(&broken).err().unwrap().to_string();
        assert!(err.contains(file), "{file}: {err}");
    };
    expect_error("config.json", Some("{ not json"));
    expect_error("model.safetensors", Some("garbage"));
    expect_error("model.safetensors", None);
    expect_error("tokenizer.json", Some("[]"));
    expect_error("tokenizer.json", None);

    let unsupported = dir.path().join("gpt2");
    write_model(&unsupported, 1);
    std::fs::write(
        unsupported.join("config.json"),
        r#"{"model_type": "gpt2", "max_position_embeddings": 8, "pad_token_id": 0}"#,
    )
    .unwrap();
    let err = CrossEncoder::load(&unsupported).err().unwrap().to_string();
    assert!(err.contains("config.json") && err.contains("gpt2"), "{err}");
    CrossEncoder::load(&model).unwrap();
}
