//! End to end with no network: `shiori ask --pipeline basic` answers from the sample corpus with
//! SmolLM2-135M-Instruct run locally (fetched by `shiori models fetch`), citing real sources.

mod common;

use common::*;

#[test]
fn the_basic_pipeline_answers_with_a_local_model_and_cites_a_real_source() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    index(&data, &sample_faq_dir().join("documents.jsonl"));
    let config = data.join("shiori.toml");
    let mut text = std::fs::read_to_string(&config).unwrap_or_default();
    text.push_str(
        r#"
[llm.models.local]
provider = "local"
model = "smollm2"

[pipeline]
answer_model = "local"
max_tokens = 120
"#,
    );
    std::fs::write(&config, text).unwrap();

    let answer = run_json(
        &data,
        &[
            "ask",
            "How many API requests per minute does the Business plan allow?",
            "--pipeline",
            "basic",
            "--top-k",
            "3",
        ],
    );
    let sources = answer["sources"].as_array().unwrap();
    let citations = answer["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "no citation in {answer:#}");
    for citation in citations {
        let number = citation["number"].as_u64().unwrap() as usize;
        assert!(
            (1..=sources.len()).contains(&number),
            "citation [{number}] with {} sources",
            sources.len()
        );
    }
    let steps = answer["trace"]["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s["model"].as_str().is_some_and(|m| m.starts_with("local:"))),
        "no step ran the local model: {steps:#?}"
    );
    assert!(answer["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}
