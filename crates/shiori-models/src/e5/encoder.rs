//! The multilingual-e5-small encoder (12-layer BERT, post-LayerNorm) over E5S1 weights: Q4_0
//! matrices widened at load for the shared BERT encoder, f32 biases and LayerNorms, erf GELU.
//!
//! Widening costs 85 MB but measured 5.3× faster than candle's quantized matmul (activations
//! quantized to Q8_0, as the reference does): 8.0 against 1.5 passages/s on 64 msmarco passages
//! (`shiori bench embed … --limit 64 --embedder e5`, with and without `CANDLE_DEQUANTIZE_ALL`),
//! measured when the forward pass still ran on candle.

use candle_core::quantized::{ggml_file::qtensor_from_ggml, GgmlDType};
use candle_core::Device;
use half::f16;
use rayon::prelude::*;
use shiori_core::EmbedError;

use super::file::{E5File, Hyper, TensorType, Q4_BLOCK, Q4_BLOCK_BYTES};
use crate::bert::{BertEncoder, DenseWeights, LayerWeights, NormWeights, Precision};

/// A dense layer from Q4_0 rows stacked from the named matrices (Q4_0 rows are independent
/// blocks, so stacking the bytes stacks the rows): query, key and value then run as one product.
fn stacked_dense(
    file: &E5File,
    names: &[&str],
    rows: usize,
    cols: usize,
) -> Result<DenseWeights, EmbedError> {
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
    let outputs = names.len() * rows;
    let widen = || -> candle_core::Result<Vec<f32>> {
        qtensor_from_ggml(GgmlDType::Q4_0, &weight, vec![outputs, cols], &Device::Cpu)?
            .dequantize(&Device::Cpu)?
            .flatten_all()?
            .to_vec1()
    };
    Ok(DenseWeights {
        weight: widen().map_err(|e| model_error(file, e))?,
        bias,
        outputs,
    })
}

pub(crate) struct Encoder {
    pub hyper: Hyper,
    /// `emb.word` as stored: Q4_0 rows, dequantized one token at a time (the 250k-row table
    /// would take 384 MB as f32).
    word_rows: Vec<u8>,
    /// Position rows with the single token-type row already added.
    positions: Vec<f32>,
    bert: BertEncoder,
}

impl Encoder {
    pub fn load(file: &E5File, precision: Precision) -> Result<Encoder, EmbedError> {
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
        let norm = |name: &str| -> Result<NormWeights, EmbedError> {
            Ok(NormWeights {
                gamma: file.f32_tensor(&format!("{name}.w"), h)?,
                beta: file.f32_tensor(&format!("{name}.b"), h)?,
            })
        };
        let layers = (0..hyper.layers)
            .into_par_iter()
            .map(|l| {
                let name = |part: &str| format!("l{l}.{part}");
                Ok(LayerWeights {
                    query_key_value: stacked_dense(
                        file,
                        &[&name("q"), &name("k"), &name("v")],
                        h,
                        h,
                    )?,
                    attention_out: stacked_dense(file, &[&name("ao")], h, h)?,
                    attention_norm: norm(&name("aln"))?,
                    ffn_in: stacked_dense(file, &[&name("fi")], hyper.ffn, h)?,
                    ffn_out: stacked_dense(file, &[&name("fo")], h, hyper.ffn)?,
                    output_norm: norm(&name("oln"))?,
                })
            })
            .collect::<Result<_, EmbedError>>()?;
        let bert = BertEncoder::new(
            hyper.heads,
            hyper.eps as f32,
            norm("emb.ln")?,
            layers,
            precision,
        );
        Ok(Encoder {
            hyper,
            word_rows,
            positions,
            bert,
        })
    }

    /// Each sequence's mean final hidden state.
    pub fn mean_vectors(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let lengths: Vec<usize> = sequences.iter().map(|s| s.len()).collect();
        let x = self.embed(sequences)?;
        Ok(self.bert.mean_vectors(x, &lengths))
    }

    /// Word rows dequantized, plus position (from 0 in each sequence, as the file's table
    /// expects) and token type.
    fn embed(&self, sequences: &[&[u32]]) -> Result<Vec<f32>, EmbedError> {
        let h = self.hyper.hidden;
        let row_bytes = h / Q4_BLOCK * Q4_BLOCK_BYTES;
        let tokens: usize = sequences.iter().map(|s| s.len()).sum();
        let mut out = vec![0f32; tokens * h];
        let mut rows = out.chunks_exact_mut(h);
        for sequence in sequences {
            for (position, (&id, row)) in sequence.iter().zip(rows.by_ref()).enumerate() {
                let id = id as usize;
                if id >= self.hyper.vocab_rows {
                    return Err(EmbedError::inference(format!(
                        "token id {id} outside the vocabulary"
                    )));
                }
                dequantize_q4_0(&self.word_rows[id * row_bytes..(id + 1) * row_bytes], row);
                let position = &self.positions[position * h..(position + 1) * h];
                row.iter_mut().zip(position).for_each(|(r, p)| *r += p);
            }
        }
        Ok(out)
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

fn model_error(file: &E5File, e: candle_core::Error) -> EmbedError {
    EmbedError::inference(file.path.display().to_string()).because(e)
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
