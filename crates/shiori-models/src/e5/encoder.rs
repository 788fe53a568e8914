//! The multilingual-e5-small encoder (12-layer BERT, post-LayerNorm) over E5S1 weights: Q4_0
//! matrices widened to f32 at load, f32 biases and LayerNorms, erf GELU.
//!
//! Widening costs 85 MB but measured 5.3× faster than candle's quantized matmul (activations
//! quantized to Q8_0, as the reference does): 8.0 against 1.5 passages/s on 64 msmarco passages
//! (`shiori bench embed … --limit 64 --embedder e5`, with and without `CANDLE_DEQUANTIZE_ALL`).

use candle_core::quantized::{ggml_file::qtensor_from_ggml, GgmlDType};
use candle_core::{Device, Module, Tensor, D};
use candle_nn::{LayerNorm, Linear};
use half::f16;
use shiori_core::EmbedError;

use super::file::{E5File, Hyper, TensorType, Q4_BLOCK, Q4_BLOCK_BYTES};

/// A linear layer from Q4_0 rows stacked from the named matrices (Q4_0 rows are independent
/// blocks, so stacking the bytes stacks the rows): query, key and value then run as one matmul.
fn stacked_linear(
    file: &E5File,
    names: &[&str],
    rows: usize,
    cols: usize,
) -> Result<Linear, EmbedError> {
    let mut weight = Vec::with_capacity(names.len() * rows * cols / Q4_BLOCK * Q4_BLOCK_BYTES);
    let mut bias = Vec::with_capacity(names.len() * rows);
    for name in names {
        weight.extend_from_slice(file.tensor(
            &format!("{name}.w"),
            TensorType::Q4_0,
            rows * cols,
        )?);
        bias.extend(file.f32_tensor(&format!("{name}.b"), rows)?);
    }
    let out_rows = names.len() * rows;
    let widen = move || -> candle_core::Result<Linear> {
        let quantized =
            qtensor_from_ggml(GgmlDType::Q4_0, &weight, vec![out_rows, cols], &Device::Cpu)?;
        let weight = quantized.dequantize(&Device::Cpu)?;
        let bias = Tensor::from_vec(bias, out_rows, &Device::Cpu)?;
        Ok(Linear::new(weight, Some(bias)))
    };
    widen().map_err(|e| model_error(file, e))
}

struct Layer {
    query_key_value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    ffn_in: Linear,
    ffn_out: Linear,
    output_norm: LayerNorm,
}

pub(crate) struct Encoder {
    pub hyper: Hyper,
    /// `emb.word` as stored: Q4_0 rows, dequantized one token at a time (the 250k-row table
    /// would take 384 MB as f32).
    word_rows: Vec<u8>,
    /// Position rows with the single token-type row already added.
    positions: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
}

impl Encoder {
    pub fn load(file: &E5File) -> Result<Encoder, EmbedError> {
        let hyper = file.hyper;
        let h = hyper.hidden;
        let word_rows = file
            .tensor("emb.word", TensorType::Q4_0, hyper.vocab_rows * h)?
            .to_vec();
        let token_type = file.f32_tensor("emb.type", hyper.token_types * h)?;
        let mut positions = file.f32_tensor("emb.pos", hyper.max_positions * h)?;
        for row in positions.chunks_exact_mut(h) {
            row.iter_mut().zip(&token_type).for_each(|(p, t)| *p += t);
        }
        let norm = |name: &str| -> Result<LayerNorm, EmbedError> {
            let weight = file.f32_tensor(&format!("{name}.w"), h)?;
            let bias = file.f32_tensor(&format!("{name}.b"), h)?;
            let to_tensor = |v: Vec<f32>| {
                Tensor::from_vec(v, h, &Device::Cpu).map_err(|e| model_error(file, e))
            };
            Ok(LayerNorm::new(
                to_tensor(weight)?,
                to_tensor(bias)?,
                hyper.eps,
            ))
        };
        let layers = (0..hyper.layers)
            .map(|l| {
                let name = |part: &str| format!("l{l}.{part}");
                Ok(Layer {
                    query_key_value: stacked_linear(
                        file,
                        &[&name("q"), &name("k"), &name("v")],
                        h,
                        h,
                    )?,
                    attention_out: stacked_linear(file, &[&name("ao")], h, h)?,
                    attention_norm: norm(&name("aln"))?,
                    ffn_in: stacked_linear(file, &[&name("fi")], hyper.ffn, h)?,
                    ffn_out: stacked_linear(file, &[&name("fo")], h, hyper.ffn)?,
                    output_norm: norm(&name("oln"))?,
                })
            })
            .collect::<Result<_, EmbedError>>()?;
        Ok(Encoder {
            hyper,
            word_rows,
            positions,
            embedding_norm: norm("emb.ln")?,
            layers,
        })
    }

    /// Final hidden states `[rows, seq_len, hidden]` for right-padded `ids` with `mask`
    /// (1 = token, 0 = padding), both row-major `[rows, seq_len]`.
    pub fn forward(
        &self,
        ids: &[u32],
        mask: &[u32],
        rows: usize,
        seq_len: usize,
    ) -> candle_core::Result<Tensor> {
        let h = self.hyper.hidden;
        let heads = self.hyper.heads;
        let head_dim = h / heads;
        let mut x = self.embed(ids, seq_len)?.reshape((rows, seq_len, h))?;
        x = self.embedding_norm.forward(&x)?;

        let mask_bias: Vec<f32> = mask
            .iter()
            .map(|&m| if m == 0 { -1e9 } else { 0.0 })
            .collect();
        let mask_bias = Tensor::from_vec(mask_bias, (rows, 1, 1, seq_len), &Device::Cpu)?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let split_heads = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((rows, seq_len, heads, head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        for layer in &self.layers {
            let qkv = layer.query_key_value.forward(&x)?;
            let query = split_heads(qkv.narrow(D::Minus1, 0, h)?)?;
            let key = split_heads(qkv.narrow(D::Minus1, h, h)?)?;
            let value = split_heads(qkv.narrow(D::Minus1, 2 * h, h)?)?;
            let scores = (query.matmul(&key.t()?)? * scale)?.broadcast_add(&mask_bias)?;
            let probabilities = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probabilities
                .matmul(&value)?
                .transpose(1, 2)?
                .reshape((rows, seq_len, h))?;
            let attended = layer.attention_out.forward(&context)?;
            x = layer.attention_norm.forward(&(x + attended)?)?;
            let inner = layer.ffn_in.forward(&x)?.gelu_erf()?;
            let ffn = layer.ffn_out.forward(&inner)?;
            x = layer.output_norm.forward(&(x + ffn)?)?;
        }
        Ok(x)
    }

    /// Word rows dequantized, plus position (from 0 in each row, as the file's table expects)
    /// and token type.
    fn embed(&self, ids: &[u32], seq_len: usize) -> candle_core::Result<Tensor> {
        let h = self.hyper.hidden;
        let row_bytes = h / Q4_BLOCK * Q4_BLOCK_BYTES;
        let mut out = vec![0f32; ids.len() * h];
        for (i, (&id, row)) in ids.iter().zip(out.chunks_exact_mut(h)).enumerate() {
            let id = id as usize;
            if id >= self.hyper.vocab_rows {
                candle_core::bail!("token id {id} outside the vocabulary");
            }
            let bytes = &self.word_rows[id * row_bytes..(id + 1) * row_bytes];
            dequantize_q4_0(bytes, row);
            let position = &self.positions[(i % seq_len) * h..(i % seq_len + 1) * h];
            row.iter_mut().zip(position).for_each(|(r, p)| *r += p);
        }
        Tensor::from_vec(out, ids.len() * h, &Device::Cpu)
    }
}

/// Q4_0 blocks: an f16 scale, then 16 bytes whose low nibbles are weights 0..16 and high nibbles
/// weights 16..32, each stored with an offset of 8.
fn dequantize_q4_0(blocks: &[u8], out: &mut [f32]) {
    for (block, values) in blocks
        .chunks_exact(Q4_BLOCK_BYTES)
        .zip(out.chunks_exact_mut(Q4_BLOCK))
    {
        let scale = f16::from_le_bytes([block[0], block[1]]).to_f32();
        for (j, &byte) in block[2..].iter().enumerate() {
            values[j] = (f32::from(byte & 0x0F) - 8.0) * scale;
            values[j + 16] = (f32::from(byte >> 4) - 8.0) * scale;
        }
    }
}

fn model_error(file: &E5File, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Inference(format!("{}: {e}", file.path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dequantizes_nibbles_around_eight_times_the_scale() {
        let mut block = vec![0u8; Q4_BLOCK_BYTES];
        block[..2].copy_from_slice(&f16::from_f32(0.5).to_le_bytes());
        block[2] = 0xF0; // weight 0 = 0 - 8, weight 16 = 15 - 8
        block[3] = 0x08; // weight 1 = 8 - 8, weight 17 = 0 - 8
        let mut out = [0f32; Q4_BLOCK];
        dequantize_q4_0(&block, &mut out);
        assert_eq!(out[0], -4.0);
        assert_eq!(out[16], 3.5);
        assert_eq!(out[1], 0.0);
        assert_eq!(out[17], -4.0);
    }
}
