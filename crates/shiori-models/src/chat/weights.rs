//! The transformer of a GGUF chat model (llama or qwen2 architecture), its weights widened to
//! f32 at load and run on the CPU.

use std::fs::File;
use std::io::Cursor;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::{quantized_llama, quantized_qwen2};

use crate::ModelLoadError;

/// Loaded weights. Each generation needs its own KV cache: llama weights are cloned per call
/// (cheap: the tensors are shared), qwen2's type cannot be cloned, so calls take turns and clear
/// its cache first (candle's qwen2 also keeps every prompt-chunk attention mask it builds, one per
/// distinct chunk and context length, for the life of the model).
pub enum Weights {
    Llama(quantized_llama::ModelWeights),
    Qwen2(Mutex<quantized_qwen2::ModelWeights>),
}

/// One generation's view of the model: feeds tokens at a position, returns the next-token logits.
pub trait Forward {
    fn forward(&mut self, tokens: &Tensor, position: usize) -> candle_core::Result<Tensor>;
}

impl Forward for quantized_llama::ModelWeights {
    fn forward(&mut self, tokens: &Tensor, position: usize) -> candle_core::Result<Tensor> {
        quantized_llama::ModelWeights::forward(self, tokens, position)
    }
}

impl Forward for quantized_qwen2::ModelWeights {
    fn forward(&mut self, tokens: &Tensor, position: usize) -> candle_core::Result<Tensor> {
        quantized_qwen2::ModelWeights::forward(self, tokens, position)
    }
}

impl Weights {
    /// Reads the tensors of `content` (already parsed from `file`) for its architecture.
    pub fn load(
        path: &Path,
        architecture: &str,
        content: Content,
        file: &mut File,
    ) -> Result<Self, ModelLoadError> {
        let device = Device::Cpu;
        let converted = widened(&content, file).map_err(|e| ModelLoadError::invalid(path, e))?;
        let mut reader = Cursor::new(converted);
        let content = Content::read(&mut reader).map_err(|e| ModelLoadError::invalid(path, e))?;
        let weights = match architecture {
            "llama" => quantized_llama::ModelWeights::from_gguf(content, &mut reader, &device)
                .map(Weights::Llama),
            "qwen2" => quantized_qwen2::ModelWeights::from_gguf(content, &mut reader, &device)
                .map(|w| Weights::Qwen2(Mutex::new(w))),
            other => {
                return Err(ModelLoadError::invalid(
                    path,
                    format!("architecture {other:?} is not supported (llama, qwen2 are)"),
                ))
            }
        };
        weights.map_err(|e| ModelLoadError::invalid(path, e))
    }

    /// The longest sequence the implementation can run: llama's rotary tables stop at
    /// `MAX_SEQ_LEN` whatever the GGUF says.
    pub fn max_positions(&self, declared: usize) -> usize {
        match self {
            Weights::Llama(_) => declared.min(quantized_llama::MAX_SEQ_LEN),
            Weights::Qwen2(_) => declared,
        }
    }

    /// Runs `generate` with a model whose KV cache is empty.
    pub fn with_fresh_cache<T>(&self, generate: impl FnOnce(&mut dyn Forward) -> T) -> T {
        match self {
            Weights::Llama(pristine) => generate(&mut pristine.clone()),
            Weights::Qwen2(shared) => {
                // A panic mid-generation leaves only a stale cache behind, which is cleared here.
                let mut model = shared.lock().unwrap_or_else(PoisonError::into_inner);
                model.clear_kv_cache();
                generate(&mut *model)
            }
        }
    }
}

/// The GGUF re-written in memory with every quantized tensor widened to F16; the loaders turn
/// F16 weights into f32 tensors. candle multiplies quantized weights one row at a time (Q4_1 and
/// Q5_0, most of SmolLM2 and Qwen2.5, with scalar code), f32 ones with a blocked SIMD GEMM:
/// measured on SmolLM2, prompt tokens/s went from 7 to over 130 and generation from 1.5 to 16,
/// for about 4 bytes of memory per parameter.
fn widened(content: &Content, file: &mut File) -> candle_core::Result<Vec<u8>> {
    let mut tensors = Vec::with_capacity(content.tensor_infos.len());
    for name in content.tensor_infos.keys() {
        let tensor = content.tensor(file, name, &Device::Cpu)?;
        let tensor = match tensor.dtype() {
            GgmlDType::F32 | GgmlDType::F16 => tensor,
            _ => QTensor::quantize(&tensor.dequantize(&Device::Cpu)?, GgmlDType::F16)?,
        };
        tensors.push((name.as_str(), tensor));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(key, value)| (key.as_str(), value))
        .collect();
    let tensors: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let mut out = Cursor::new(Vec::new());
    gguf_file::write(&mut out, &metadata, &tensors)?;
    Ok(out.into_inner())
}
