//! What every [`DocumentStore`] backend must do about readers: a property check over random
//! group assignments and random queries, run by this crate's tests on SQLite/tantivy/usearch
//! and by `shiori-store-postgres`'s on PostgreSQL. Seeded, so a failure names its seed.

use shiori_core::{joined_groups, Access, Chunk, Document, Filters, GROUPS_KEY};
use shiori_store::{DocumentStore, FileChange, FileRecord};
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
