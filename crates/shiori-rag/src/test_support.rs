//! Fixtures shared by the unit tests.

use shiori_core::{Chunk, Hit};

pub fn hit(doc_id: &str, score: f32) -> Hit {
    hit_with_text(doc_id, doc_id, score)
}

pub fn hit_with_text(doc_id: &str, text: &str, score: f32) -> Hit {
    Hit {
        chunk: Chunk {
            chunk_id: format!("{doc_id}#0"),
            doc_id: doc_id.to_string(),
            title: doc_id.to_string(),
            source: format!("{doc_id}.md"),
            text: text.to_string(),
            index: 0,
            total: 1,
            modified: 0,
            content_hash: String::new(),
            metadata: Default::default(),
        },
        score,
        dense_score: Some(score),
        bm25_score: None,
    }
}
