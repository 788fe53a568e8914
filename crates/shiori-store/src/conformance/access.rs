//! What every [`DocumentStore`] backend must do about readers: a property check over random
//! group assignments and random queries, run by this crate's tests on SQLite/tantivy/usearch
//! and by `shiori-store-postgres`'s on PostgreSQL. Seeded, so a failure names its seed.

use crate::{DocumentStore, FileChange, FileRecord};
use shiori_core::{joined_groups, Access, Chunk, Document, Filters, GROUPS_KEY, NO_READER_GROUP};
use std::collections::{BTreeMap, BTreeSet, HashMap};

const GROUPS: [&str; 4] = ["hr", "sales", "legal", "ops"];
const WORDS: [&str; 10] = [
    "river", "mountain", "forest", "desert", "ocean", "valley", "island", "meadow", "glacier",
    "canyon",
];
const FILES: usize = 40;
const CHUNKS_PER_FILE: usize = 5;
const QUERIES: usize = 60;

/// Fills `store` with files whose documents name random groups (or none), then checks that
/// for random readers and queries, dense and BM25 search, key listing, file listing and counts
/// return only readable chunks, and as many as the reader may read up to `k`.
pub fn check_reads_stay_in_groups(store: &mut dyn DocumentStore, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let changes: Vec<FileChange> = (0..FILES)
        .map(|n| {
            let groups = joined_groups(random_groups(&mut rng));
            random_file(&mut rng, n, groups)
        })
        .collect();
    store.apply(changes).unwrap();
    store.commit().unwrap();
    let all = store.keys_matching(&Filters::default()).unwrap();
    let chunks: HashMap<u64, Chunk> = store.chunks(&all).unwrap().into_iter().collect();
    assert_eq!(chunks.len(), FILES * CHUNKS_PER_FILE);

    for query in 0..QUERIES {
        let context = format!("seed {seed}, query {query}");
        let access = Access::Groups(
            random_groups(&mut rng)
                .into_iter()
                .map(String::from)
                .collect(),
        );
        let filters = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        let readable: Vec<u64> = chunks
            .iter()
            .filter(|(_, chunk)| {
                access.can_read(chunk.metadata.get(GROUPS_KEY).map(String::as_str))
            })
            .map(|(key, _)| *key)
            .collect();
        let can_read = |key: &u64| readable.contains(key);
        let k = rng.usize(1..=20);

        let dense = store
            .dense_search(&random_vector(&mut rng), k, &filters)
            .unwrap();
        assert!(
            dense.iter().all(|(key, _)| can_read(key)),
            "{context}: dense"
        );
        assert_eq!(
            dense.len(),
            k.min(readable.len()),
            "{context}: dense fills k"
        );

        let words: Vec<&str> = (0..rng.usize(1..=3))
            .map(|_| WORDS[rng.usize(..WORDS.len())])
            .collect();
        let keyword = store.keyword_search(&words.join(" "), k, &filters).unwrap();
        assert!(
            keyword.iter().all(|(key, _)| can_read(key)),
            "{context}: bm25"
        );
        let matching = readable
            .iter()
            .filter(|key| {
                let text = &chunks[*key].text;
                words.iter().any(|word| text.split(' ').any(|w| w == *word))
            })
            .count();
        assert_eq!(keyword.len(), k.min(matching), "{context}: bm25 fills k");

        let mut listed = store.keys_matching(&filters).unwrap();
        listed.sort_unstable();
        let mut expected = readable.clone();
        expected.sort_unstable();
        assert_eq!(listed, expected, "{context}: keys");
        assert_eq!(
            store.stats(&filters).unwrap().chunks as usize,
            readable.len(),
            "{context}: counts"
        );
        let readable_files: BTreeSet<String> = readable
            .iter()
            .map(|key| chunks[key].source.clone())
            .collect();
        let files: BTreeSet<String> = store.file_paths(&filters).unwrap().into_iter().collect();
        assert_eq!(files, readable_files, "{context}: files");
    }
    check_a_write_is_read_at_once(store, &mut rng);
}

/// What a reader may read is not remembered across a write.
fn check_a_write_is_read_at_once(store: &mut dyn DocumentStore, rng: &mut fastrand::Rng) {
    let filters = Filters {
        access: Access::Groups(["hr".to_string()].into()),
        ..Filters::default()
    };
    let all = FILES * CHUNKS_PER_FILE * 2;
    let before = store
        .dense_search(&random_vector(rng), all, &filters)
        .unwrap();
    store
        .apply(vec![random_file(rng, FILES, "hr".to_string())])
        .unwrap();
    store.commit().unwrap();
    let after = store
        .dense_search(&random_vector(rng), all, &filters)
        .unwrap();
    assert_eq!(after.len(), before.len() + CHUNKS_PER_FILE);
}

/// The BM25 rule docs/security.md documents: chunks a reader may not read are never its
/// candidates and do not count in the statistics its scores use (a term's document frequency,
/// the number of chunks, their average length), so hidden chunks with a word leave the scores
/// of readable chunks as they were, in searches and in the scores fusion asks for. A chunk
/// stored with [`NO_READER_GROUP`] is read by no group, only by readers of everything.
pub fn check_hidden_chunks_do_not_move_a_readers_scores(store: &mut dyn DocumentStore) {
    let reader = |groups: &[&str]| Filters {
        access: Access::Groups(groups.iter().map(|g| g.to_string()).collect()),
        ..Filters::default()
    };
    let (sales, hr) = (reader(&["sales"]), reader(&["hr"]));
    let public = [
        "the payroll calendar closes early",
        "the canteen opens at noon",
        "payroll questions go to the payroll desk on the second floor",
    ];
    let files = public.iter().enumerate();
    let mut changes: Vec<FileChange> = files.map(|(n, text)| text_file(n, "", text)).collect();
    // A removed chunk lingers in the index's own statistics until segments merge: a reader's
    // scores must not depend on whether it is counted.
    changes.push(text_file(9, "", "payroll calendar of a removed file"));
    store.apply(changes).unwrap();
    store.commit().unwrap();
    let removed = FileChange::Remove {
        path: format!("docs/file-{}.md", 100 + 9),
    };
    store.apply(vec![removed]).unwrap();
    store.commit().unwrap();
    let query = "payroll calendar desk";
    let before = store.keyword_search(query, 10, &sales).unwrap();
    let admin_before = store
        .keyword_search(query, 10, &Filters::default())
        .unwrap();
    assert!(before.len() >= 2, "{before:?}");
    assert_eq!(
        keys(&before),
        keys(&admin_before),
        "a reader of every chunk finds what admin finds"
    );
    let hidden = (10..16)
        .map(|n| text_file(n, "hr", "payroll payroll calendar restricted note"))
        .collect();
    store.apply(hidden).unwrap();
    store.commit().unwrap();
    let after = store.keyword_search(query, 10, &sales).unwrap();
    assert_eq!(
        keys(&after),
        keys(&before),
        "hidden chunks are never candidates"
    );
    assert_same_scores(
        &after,
        &before,
        "hidden chunks moved a reader's BM25 scores",
    );
    let mut missed = store
        .keyword_scores(query, &keys(&before), &sales.access)
        .unwrap();
    let mut searched = before.clone();
    missed.sort_by_key(|hit| hit.0);
    searched.sort_by_key(|hit| hit.0);
    assert_same_scores(
        &missed,
        &searched,
        "fusion's scores differ from the search's",
    );
    let admin_after = store
        .keyword_search(query, 10, &Filters::default())
        .unwrap();
    let public_scores = |hits: &[(u64, f32)]| -> Vec<f32> {
        let wanted = keys(&before);
        hits.iter()
            .filter(|hit| wanted.contains(&hit.0))
            .map(|hit| hit.1)
            .collect()
    };
    assert!(
        public_scores(&admin_after)[0] < public_scores(&admin_before)[0],
        "a reader of everything counts every chunk: {admin_before:?} then {admin_after:?}"
    );
    let hr_found = store.keyword_search(query, 10, &hr).unwrap();
    assert_eq!(hr_found.len(), before.len() + 6);

    store
        .apply(vec![text_file(7, NO_READER_GROUP, "payroll for nobody")])
        .unwrap();
    store.commit().unwrap();
    let everyone = reader(&["hr", "sales", "legal", "ops"]);
    let readable = store.keys_matching(&everyone).unwrap();
    assert_eq!(readable.len(), 9);
    let all = store.keys_matching(&Filters::default()).unwrap();
    let nobodys: Vec<u64> = all
        .into_iter()
        .filter(|key| !readable.contains(key))
        .collect();
    assert_eq!(nobodys.len(), 1);
    let found = |filters: &Filters| -> Vec<u64> {
        let hits = store.keyword_search("payroll nobody", 10, filters).unwrap();
        hits.into_iter().map(|hit| hit.0).collect()
    };
    assert!(!found(&everyone).contains(&nobodys[0]));
    assert!(found(&Filters::default()).contains(&nobodys[0]));
}

fn keys(hits: &[(u64, f32)]) -> Vec<u64> {
    hits.iter().map(|hit| hit.0).collect()
}

/// The same keys in the same order, with scores equal to float rounding.
fn assert_same_scores(actual: &[(u64, f32)], expected: &[(u64, f32)], why: &str) {
    assert_eq!(keys(actual), keys(expected), "{why}");
    for ((_, a), (_, e)) in actual.iter().zip(expected) {
        assert!(
            (a - e).abs() <= 1e-5 * e.abs(),
            "{why}: {expected:?} then {actual:?}"
        );
    }
}

/// A file of one chunk of `text` whose document names `groups` (none when empty).
fn text_file(n: usize, groups: &str, text: &str) -> FileChange {
    let mut rng = fastrand::Rng::with_seed(n as u64);
    let FileChange::Upsert {
        file,
        mut documents,
        chunks,
    } = random_file(&mut rng, 100 + n, groups.to_string())
    else {
        unreachable!("random_file upserts")
    };
    documents.truncate(1);
    let (mut chunk, vector) = chunks.into_iter().next().unwrap();
    chunk.text = text.to_string();
    chunk.total = 1;
    FileChange::Upsert {
        file,
        documents,
        chunks: vec![(chunk, vector)],
    }
}

/// Up to two groups; none a third of the time (then everyone may read it).
fn random_groups(rng: &mut fastrand::Rng) -> Vec<&'static str> {
    (0..rng.usize(0..=2))
        .map(|_| GROUPS[rng.usize(..GROUPS.len())])
        .collect()
}

fn random_vector(rng: &mut fastrand::Rng) -> Vec<f32> {
    let vector: Vec<f32> = (0..3).map(|_| rng.f32() - 0.5).collect();
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-6);
    vector.iter().map(|v| v / norm).collect()
}

fn random_file(rng: &mut fastrand::Rng, n: usize, groups: String) -> FileChange {
    let path = format!("docs/file-{n}.md");
    let doc_id = format!("doc-{n}");
    let mut metadata = BTreeMap::new();
    if !groups.is_empty() {
        metadata.insert(GROUPS_KEY.to_string(), groups);
    }
    let chunks = (0..CHUNKS_PER_FILE)
        .map(|index| {
            let text: Vec<&str> = (0..4).map(|_| WORDS[rng.usize(..WORDS.len())]).collect();
            let text = text.join(" ");
            let chunk = Chunk {
                chunk_id: format!("{doc_id}#{index}"),
                doc_id: doc_id.clone(),
                title: String::new(),
                source: path.clone(),
                content_hash: format!("{doc_id}-{index}-{text}"),
                text,
                index: index as u32,
                total: CHUNKS_PER_FILE as u32,
                modified: 10,
                metadata: metadata.clone(),
            };
            (chunk, random_vector(rng))
        })
        .collect();
    FileChange::Upsert {
        file: FileRecord {
            path: path.clone(),
            content_hash: format!("hash-{n}"),
            size: 1,
            modified_ns: 10,
            read_at_ns: 20,
        },
        documents: vec![Document {
            doc_id,
            title: String::new(),
            source: path,
            text: String::new(),
            modified: 10,
            metadata,
        }],
        chunks,
    }
}
