//! End to end: metadata filters, time decay and fusion settings change what search returns.

#[macro_use]
mod common;

use common::*;

backend_tests!(
    filters_restrict_results_to_matching_chunks,
    time_decay_prefers_recent_documents_when_configured
);

fn filters_restrict_results_to_matching_chunks(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    copy_fixtures(&corpus);
    let data = work.path().join("data");
    index(&data, &corpus);

    for mode in ["bm25", "dense", "hybrid"] {
        let result = run_json(
            &data,
            &[
                "search",
                "storage VPN vacation",
                "--mode",
                mode,
                "--filter",
                "doc_type=jsonl",
            ],
        );
        let hits = result["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{mode}: {result}");
        for hit in hits {
            assert!(
                hit["doc_id"].as_str().unwrap().starts_with("faq-"),
                "{mode}: {hit}"
            );
        }
    }
    let by_doc = run_json(&data, &["search", "VPN", "--filter", "doc_id=faq-storage"]);
    let ids: Vec<&str> = by_doc["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["doc_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["faq-storage"]);
    let bad = run(
        &data,
        &["search", "VPN", "--filter", "modified_after=yesterday"],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("modified_after"));
}

fn time_decay_prefers_recent_documents_when_configured(backend: Backend) {
    let store = test_store(backend);
    let work = &store.work;
    let corpus = work.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("policies.jsonl"),
        concat!(
            "{\"doc_id\":\"old\",\"created_at\":\"2015-04-01\",\"text\":\"The travel policy allows business class on flights over eight hours.\"}\n",
            "{\"doc_id\":\"new\",\"created_at\":\"2026-04-01\",\"text\":\"Travel policy: business class is allowed on flights over ten hours.\"}\n",
        ),
    )
    .unwrap();
    let data = work.path().join("data");
    index(&data, &corpus);
    let query = "The travel policy allows business class on flights over eight hours.";
    assert_eq!(
        search_ids(&data, query, "hybrid")[0],
        "old",
        "without decay the exact match wins"
    );

    append_config(
        &data,
        "[retrieval]\ntime_decay = { weight = 0.9, half_life_days = 365.0 }\n",
    );
    // Dense cosines are not rescaled per query, so the decay alone decides here. (Weighted
    // hybrid fusion min-max normalises each list, which leaves the weaker of two candidates at
    // exactly 0, where no decay factor can lift it.)
    assert_eq!(search_ids(&data, query, "dense")[0], "new");
}
