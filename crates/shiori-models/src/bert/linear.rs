//! A dense layer `input · Wᵀ + bias` over row-major token matrices, in bfloat16 where the CPU
//! has AVX-512 BF16, in 8-bit integers when asked for, and in f32 elsewhere: a query's few rows
//! through the narrow AVX2 kernel, batches through the `gemm` crate candle itself calls.

use rayon::prelude::*;

use super::attention::{Arithmetic, BF16_HEAD_DIM};
#[cfg(target_arch = "x86_64")]
use super::bf16::{self, Bf16Weights};
use super::int8::{Int8Kernel, Int8Weights};
#[cfg(target_arch = "x86_64")]
use super::narrow::{self, NarrowKernel};
use super::{math, ROWS_PER_TASK};

/// The arithmetic of the dense layers. Attention follows it in bfloat16 where the CPU has
/// AVX-512 BF16 (int8 and bf16) and stays f32 under f32; GELU and LayerNorm always run in f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Weights and activations rounded to bfloat16, products summed in f32: about twice as
    /// fast, vectors within a cosine of 0.9999 of f32 ones. Runs in f32 on a CPU without
    /// AVX-512 BF16.
    Bf16,
    F32,
    /// Weights quantised to 8 bits per output channel, each token's inputs per call, products
    /// summed exactly in i32 (AVX-512 VNNI, AVX-VNNI or AVX2; plain Rust elsewhere).
    Int8,
}

impl Precision {
    /// 8-bit integers where the CPU has a vector int8 kernel (AVX2 or later), else bfloat16
    /// where it multiplies that natively, else f32. int8 measured 1.5× bf16 and 4× f32 on
    /// AVX-512 VNNI, with nDCG@10 within 0.003 of f32 on jsquad-valid and msmarco-5k
    /// (docs/benchmarks.md).
    pub fn fastest() -> Precision {
        if Int8Kernel::available()[0] != Int8Kernel::Portable {
            return Precision::Int8;
        }
        Precision::Bf16.on_this_cpu()
    }

    /// The precision that actually runs when this one is asked for.
    pub fn on_this_cpu(self) -> Precision {
        match self {
            #[cfg(target_arch = "x86_64")]
            Precision::Bf16 if bf16::supported() => Precision::Bf16,
            Precision::Int8 => Precision::Int8,
            _ => Precision::F32,
        }
    }

    /// As `shiori.toml` names it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// The CPU features this precision's dense layers run on here, and attention's where they
    /// differ, as a person reads them: "AVX-512 VNNI; attention AVX-512 BF16".
    pub fn kernel_name(self) -> String {
        let layers = match self.on_this_cpu() {
            Precision::Bf16 => "AVX-512 BF16",
            Precision::Int8 => Int8Kernel::detect().name(),
            Precision::F32 => f32_kernel_name(),
        };
        let attention = Arithmetic::for_layers(self.on_this_cpu(), BF16_HEAD_DIM);
        match attention == Arithmetic::F32 || self.on_this_cpu() == Precision::Bf16 {
            true => layers.to_string(),
            false => format!("{layers}; attention AVX-512 BF16"),
        }
    }
}

/// What the `gemm` crate picks for f32 batches on this CPU.
fn f32_kernel_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            return "AVX-512F (gemm)";
        }
        if is_x86_feature_detected!("fma") {
            return "AVX2/FMA (gemm)";
        }
    }
    "gemm"
}

pub(crate) struct Linear {
    kernel: Kernel,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

enum Kernel {
    #[cfg(target_arch = "x86_64")]
    Bf16(Bf16Weights),
    Int8(Int8Weights),
    /// Row-major `[outputs, inputs]`, as stored.
    F32 {
        weight: Vec<f32>,
        #[cfg(target_arch = "x86_64")]
        narrow: Option<NarrowKernel>,
    },
}

impl Kernel {
    fn f32(weight: Vec<f32>) -> Kernel {
        Kernel::F32 {
            weight,
            #[cfg(target_arch = "x86_64")]
            narrow: NarrowKernel::detect(),
        }
    }
}

impl Linear {
    /// `weight` is row-major `[outputs, inputs]` (PyTorch's layout). A shape the bfloat16
    /// kernel cannot take runs in f32.
    pub fn new(weight: Vec<f32>, bias: Vec<f32>, outputs: usize, precision: Precision) -> Linear {
        let inputs = weight.len() / outputs.max(1);
        let kernel = match precision {
            #[cfg(target_arch = "x86_64")]
            Precision::Bf16 if bf16::supported() => Bf16Weights::pack(&weight, outputs, inputs)
                .map_or_else(|| Kernel::f32(weight), Kernel::Bf16),
            Precision::Int8 => Int8Weights::pack(&weight, outputs, inputs, Int8Kernel::detect())
                .map_or_else(|| Kernel::f32(weight), Kernel::Int8),
            _ => Kernel::f32(weight),
        };
        Linear {
            kernel,
            bias,
            inputs,
            outputs,
        }
    }

    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// [`Linear::forward`] of GELU(`input`), leaving GELU(`input`) in `input`: in int8, each
    /// row just before it is quantised.
    pub fn forward_after_gelu(&self, input: &mut [f32], out: &mut [f32], scratch: &mut Vec<u32>) {
        match &self.kernel {
            Kernel::Int8(weights) => weights.matmul_after_gelu(input, &self.bias, out),
            _ => {
                input
                    .par_chunks_mut(ROWS_PER_TASK * self.inputs)
                    .for_each(math::gelu_in_place);
                self.forward(input, out, scratch);
            }
        }
    }

    /// `out = input · Wᵀ + bias` for `input.len() / inputs` rows; `scratch` is working space
    /// the bfloat16 kernel rounds the input into.
    pub fn forward(&self, input: &[f32], out: &mut [f32], scratch: &mut Vec<u32>) {
        let rows = input.len() / self.inputs;
        // The kernels below read and write through raw pointers sized by these.
        assert_eq!(self.bias.len(), self.outputs, "bias length");
        assert_eq!(out.len(), rows * self.outputs, "output length");
        match &self.kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Bf16(weights) => {
                let words = rows * self.inputs / 2;
                if scratch.len() < words {
                    scratch.resize(words, 0);
                }
                // SAFETY: the kernel is only built when `bf16::supported()`; it checks the
                // lengths it relies on.
                unsafe { weights.matmul(input, &self.bias, out, &mut scratch[..words]) };
            }
            Kernel::Int8(weights) => weights.matmul(input, &self.bias, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::F32 {
                weight,
                narrow: Some(kernel),
            } if rows <= narrow::MAX_ROWS => {
                kernel.forward(weight, &self.bias, input, out, self.inputs);
            }
            Kernel::F32 { weight, .. } => {
                for row in out.chunks_exact_mut(self.outputs) {
                    row.copy_from_slice(&self.bias);
                }
                // SAFETY: `out` holds rows × outputs values (asserted above), `input` at least
                // rows × inputs (rows = len / inputs) and `weight` outputs × inputs (its shape
                // at `new`), and the strides below stay inside them.
                unsafe {
                    gemm::gemm(
                        rows,
                        self.outputs,
                        self.inputs,
                        out.as_mut_ptr(),
                        1,
                        self.outputs as isize,
                        true,
                        input.as_ptr(),
                        1,
                        self.inputs as isize,
                        weight.as_ptr(),
                        self.inputs as isize,
                        1,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::Rayon(rayon::current_num_threads()),
                    )
                }
            }
        }
    }
}

/// `input · Wᵀ + bias` summed plainly, for tests of the kernels.
#[cfg(test)]
pub(crate) fn reference_product(
    input: &[f32],
    weight: &[f32],
    bias: &[f32],
    inputs: usize,
) -> Vec<f32> {
    input
        .chunks_exact(inputs)
        .flat_map(|row| {
            weight
                .chunks_exact(inputs)
                .zip(bias)
                .map(|(w, b)| b + row.iter().zip(w).map(|(x, w)| x * w).sum::<f32>())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_precisions_compute_input_times_weight_transposed_plus_bias() {
        let (inputs, outputs) = (64, 96);
        let weight: Vec<f32> = (0..outputs * inputs)
            .map(|i| (i % 13) as f32 / 8.0 - 0.75)
            .collect();
        let bias: Vec<f32> = (0..outputs).map(|i| i as f32 / 16.0).collect();
        // 3 rows take the narrow kernel on an AVX2 CPU, 40 the `gemm` product.
        for rows in [3, 40] {
            let input: Vec<f32> = (0..rows * inputs).map(|i| (i % 5) as f32 / 4.0).collect();
            let expected = reference_product(&input, &weight, &bias, inputs);
            // Every value above is a multiple of 1/16 below 4, exact in bfloat16 too. Asking
            // for bfloat16 on a CPU without AVX-512 BF16 runs (and so tests) the f32 fallback.
            for precision in [Precision::F32, Precision::Bf16] {
                let linear = Linear::new(weight.clone(), bias.clone(), outputs, precision);
                let mut out = vec![0f32; rows * outputs];
                linear.forward(&input, &mut out, &mut Vec::new());
                assert_eq!(out, expected, "{rows} rows, {precision:?}");
            }
        }
    }

    #[test]
    fn int8_stays_within_its_quantisation_error_of_f32() {
        let (inputs, outputs) = (64, 96);
        let weight: Vec<f32> = (0..outputs * inputs)
            .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
            .collect();
        let bias: Vec<f32> = (0..outputs).map(|i| i as f32 / 16.0).collect();
        // 3 rows share the panels out among the threads, 300 share the rows out.
        for rows in [3, 300] {
            let input: Vec<f32> = (0..rows * inputs)
                .map(|i| ((i * 13) % 29) as f32 / 14.0 - 1.0)
                .collect();
            let expected = reference_product(&input, &weight, &bias, inputs);
            let linear = Linear::new(weight.clone(), bias.clone(), outputs, Precision::Int8);
            let mut out = vec![f32::NAN; rows * outputs];
            linear.forward(&input, &mut out, &mut Vec::new());
            for (got, want) in out.iter().zip(&expected) {
                // 64 products of values off by at most half of 1/63 of their range.
                assert!((got - want).abs() < 0.5, "{rows} rows: {got} vs {want}");
            }
            let mean_error = out
                .iter()
                .zip(&expected)
                .map(|(a, b)| (a - b).abs())
                .sum::<f32>()
                / out.len() as f32;
            assert!(mean_error < 0.05, "{rows} rows: mean error {mean_error}");
        }
    }
}
