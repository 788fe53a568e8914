//! `input · Wᵀ + bias` in 8-bit integers: weights quantised once per output channel
//! (symmetric), each input row per call (dynamic), products summed exactly in i32, then scaled
//! back to f32 with the two scales and the bias added. The rare input values far above the
//! rest of their row are multiplied in f32 instead ([`Outlier`]).
//!
//! The x86 instructions multiply an unsigned byte by a signed one, so input rows are quantised
//! asymmetrically to 0..=255 around a zero point `z` of their own, which also spends all the
//! levels on the row's range (a GELU output spans −0.17 to several units); `z · Σw` is
//! subtracted from each sum before scaling. AVX2's `vpmaddubsw` adds two such products into a
//! saturating i16, so for that kernel inputs keep 7 bits (0..=127, 2 · 127 · 127 < 2¹⁵); the
//! VNNI kernels add four products straight into i32 and keep 8. (7-bit weights instead, as
//! ONNX Runtime's `reduce_range` does, cost more: MiniLM's vector of an empty text fell to a
//! cosine of 0.9939 against 0.996 with 7-bit inputs.)
//!
//! Weights are packed into panels of `panel` output columns: for each group of four input
//! positions, one 32-bit word (four bytes) per column, which is the operand layout of
//! `vpdpbusd` and of `vpmaddubsw` + `vpmaddwd`.

use std::sync::OnceLock;

use super::math;
use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use super::int8_kernels;

/// The largest weight level (symmetric, 8 bits).
const WEIGHT_LEVELS: f32 = 127.0;
/// Input positions in one packed word.
pub(crate) const GROUP: usize = 4;
/// Input rows one parallel task quantises and multiplies: its bytes stay in L2 while every
/// panel streams past them, and each panel is read once for all of them (a first index of
/// jsquad-valid, 2 cores: 5.08 s with 64 rows, 4.94 s with 128, 5.03 s with 256).
const ROWS_PER_TASK: usize = 128;
/// How many times its row's root mean square an input value may be before it is multiplied in
/// f32 rather than given the row's scale.
const OUTLIER_RATIO: f32 = 6.0;
/// Names a slower kernel this CPU also runs (`avx2`, `avx-vnni`, `portable`), so that one
/// machine can measure each path.
pub(crate) const KERNEL_VARIABLE: &str = "SHIORI_INT8_KERNEL";

/// The instructions the products run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Int8Kernel {
    /// AVX-512 VNNI `vpdpbusd` on 512-bit registers.
    Avx512Vnni,
    /// AVX-VNNI `vpdpbusd` on 256-bit registers (CPUs with VNNI but without AVX-512).
    AvxVnni,
    /// AVX2 `vpmaddubsw` + `vpmaddwd`.
    Avx2,
    /// Plain Rust, for CPUs with none of the above.
    Portable,
}

impl Int8Kernel {
    /// The fastest kernel this CPU runs, or the one [`KERNEL_VARIABLE`] names if it runs here.
    pub(crate) fn detect() -> Int8Kernel {
        static CHOSEN: OnceLock<Int8Kernel> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let available = Int8Kernel::available();
            let asked = std::env::var(KERNEL_VARIABLE).ok();
            let named = asked.as_deref().and_then(|name| {
                let found = available.iter().copied().find(|kernel| kernel.id() == name);
                if found.is_none() {
                    tracing::warn!("{KERNEL_VARIABLE}={name}: no such int8 kernel on this CPU");
                }
                found
            });
            named.unwrap_or(available[0])
        })
    }

    /// Every kernel this CPU runs, fastest first; [`Int8Kernel::Portable`] is always last.
    pub(crate) fn available() -> Vec<Int8Kernel> {
        let mut kernels = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vnni")
            {
                kernels.push(Int8Kernel::Avx512Vnni);
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("avxvnni") {
                kernels.push(Int8Kernel::AvxVnni);
            }
            if is_x86_feature_detected!("avx2") {
                kernels.push(Int8Kernel::Avx2);
            }
        }
        kernels.push(Int8Kernel::Portable);
        kernels
    }

    /// The CPU features the kernel runs on, as a person reads them.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Int8Kernel::Avx512Vnni => "AVX-512 VNNI",
            Int8Kernel::AvxVnni => "AVX-VNNI",
            Int8Kernel::Avx2 => "AVX2",
            Int8Kernel::Portable => "portable",
        }
    }

    /// The name [`KERNEL_VARIABLE`] takes.
    fn id(self) -> &'static str {
        match self {
            Int8Kernel::Avx512Vnni => "avx512-vnni",
            Int8Kernel::AvxVnni => "avx-vnni",
            Int8Kernel::Avx2 => "avx2",
            Int8Kernel::Portable => "portable",
        }
    }

    /// The largest input level: 7 bits where `vpmaddubsw` would saturate 8.
    pub(crate) fn input_levels(self) -> f32 {
        match self {
            Int8Kernel::Avx2 => 127.0,
            _ => 255.0,
        }
    }

    /// Output columns per panel: two registers of i32 lanes.
    pub(crate) fn panel(self) -> usize {
        match self {
            Int8Kernel::Avx512Vnni => 32,
            _ => 16,
        }
    }
}

/// Input rows quantised for one product: a level 0..=255 per value, each row's scale and
/// zero point, and the values left out of the quantisation as outliers.
pub(crate) struct QuantisedRows {
    pub values: Vec<u8>,
    pub scales: Vec<f32>,
    pub zero_points: Vec<i32>,
    pub outliers: Vec<Outlier>,
    /// Per block of [`LANES`] values of the row being quantised, a bit for each outlier.
    outlier_masks: Vec<u16>,
}

/// An input value too far above the rest of its row to share its scale: multiplied in f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Outlier {
    pub row: usize,
    pub channel: usize,
    pub value: f32,
}

/// Each row of `input` (rows of `inputs` values) as levels 0..=255 of `scale` above the
/// row's least value (or 0), so that `x ≈ scale · (level − zero_point)` with 0 exact. Values
/// beyond [`OUTLIER_RATIO`] times the row's root mean square are outliers instead (the few
/// channels where BERT's LayerNorm outputs are large would otherwise take most of the levels
/// from every other value of the row); they stand at the zero point among the levels.
pub(crate) fn quantise_rows(input: &[f32], inputs: usize, levels: f32) -> QuantisedRows {
    let mut rows = QuantisedRows::for_values(input.len());
    for (row, x) in input.chunks_exact(inputs).enumerate() {
        rows.quantise(row, x, levels);
    }
    rows
}

/// [`quantise_rows`] of GELU(`input`), GELU applied in place a row at a time just before the
/// row is quantised, while it is in the first-level cache: a pass of its own over the whole
/// batch's feed-forward activations left them in memory for the quantisation to read again.
pub(crate) fn gelu_and_quantise_rows(
    input: &mut [f32],
    inputs: usize,
    levels: f32,
) -> QuantisedRows {
    let mut rows = QuantisedRows::for_values(input.len());
    for (row, x) in input.chunks_exact_mut(inputs).enumerate() {
        math::gelu_in_place(x);
        rows.quantise(row, x, levels);
    }
    rows
}

impl QuantisedRows {
    fn for_values(count: usize) -> Self {
        QuantisedRows {
            values: vec![0; count],
            scales: Vec::new(),
            zero_points: Vec::new(),
            outliers: Vec::new(),
            outlier_masks: Vec::new(),
        }
    }

    /// Quantises `x` as row `row`, whose levels go to the row's place in `values`.
    fn quantise(&mut self, row: usize, x: &[f32], levels: f32) {
        let values = &mut self.values[row * x.len()..(row + 1) * x.len()];
        self.outlier_masks.resize(x.len().div_ceil(LANES), 0);
        let quantised = quantise_row(x, values, levels, &mut self.outlier_masks);
        if quantised.outliers > 0 {
            self.push_outliers(row, x);
        }
        self.scales.push(quantised.scale);
        self.zero_points.push(quantised.zero_point);
    }

    /// The values of `x` the masks mark: BERT's outliers are a few of each row's hundreds of
    /// values, and most blocks have none.
    fn push_outliers(&mut self, row: usize, x: &[f32]) {
        for (block, &mask) in self.outlier_masks.iter().enumerate() {
            let mut mask = mask;
            while mask != 0 {
                let channel = block * LANES + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                self.outliers.push(Outlier {
                    row,
                    channel,
                    value: x[channel],
                });
            }
        }
    }
}

/// How one row was quantised.
pub(crate) struct RowQuantisation {
    scale: f32,
    zero_point: i32,
    /// How many of the row's values are.
    outliers: usize,
}

simd_versions! {
    /// One row of [`quantise_rows`]: its levels into `values`, its outliers marked in
    /// `outlier_masks` ([`inlier_range`]), and its scale, zero point and outlier count. A
    /// third of int8's time went here while it ran 4 lanes wide.
    fn quantise_row(
        x: &[f32],
        values: &mut [u8],
        levels: f32,
        outlier_masks: &mut [u16]
    ) -> RowQuantisation {
        let limit = OUTLIER_RATIO * (math::sum_of_squares(x) / x.len() as f32).sqrt();
        let inlier = |v: f32| if v.abs() > limit { 0.0 } else { v };
        let (least, largest, outliers) = inlier_range(x, limit, outlier_masks);
        let scale = (largest - least) / levels;
        let inverse = if scale > 0.0 { 1.0 / scale } else { 0.0 };
        let zero_point = ((-least * inverse + 0.5) as i32).clamp(0, levels as i32);
        let zero = zero_point as f32;
        for (&value, level) in x.iter().zip(values.iter_mut()) {
            // An outlier counts as 0 here and so stands at the zero point.
            let rounded = (inlier(value) * inverse + zero).clamp(0.0, levels) + math::ROUNDING_MAGIC;
            // The level, 0..=255, is the low byte of the rounded sum's bits.
            *level = rounded.to_bits() as u8;
        }
        RowQuantisation {
            scale,
            zero_point,
            outliers,
        }
    }
}

/// The least and the largest of 0 and the values of `x` within `limit` of 0, and how many lie
/// beyond it, in one pass of [`LANES`] independent lanes (so that it vectorises); the ones
/// beyond are marked in `outlier_masks`, a bit a value and a mask a block of [`LANES`]. Plain
/// comparisons, not `f32::min`, whose NaN rules cost a mask per step. Panics unless there is a
/// mask for every block.
#[inline(always)]
fn inlier_range(x: &[f32], limit: f32, outlier_masks: &mut [u16]) -> (f32, f32, usize) {
    assert_eq!(
        outlier_masks.len(),
        x.len().div_ceil(LANES),
        "a mask a block"
    );
    let mut least = [0f32; LANES];
    let mut largest = [0f32; LANES];
    let mut take = |values: &[f32]| {
        let mut mask = 0u16;
        for (lane, &v) in values.iter().enumerate() {
            let outlier = v.abs() > limit;
            mask |= u16::from(outlier) << lane;
            let v = if outlier { 0.0 } else { v };
            least[lane] = if v < least[lane] { v } else { least[lane] };
            largest[lane] = if v > largest[lane] { v } else { largest[lane] };
        }
        mask
    };
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    let blocks = chunks.len();
    for (chunk, mask) in chunks.zip(outlier_masks.iter_mut()) {
        *mask = take(chunk);
    }
    if !tail.is_empty() {
        outlier_masks[blocks] = take(tail);
    }
    (
        least.iter().fold(0f32, |a, &b| a.min(b)),
        largest.iter().fold(0f32, |a, &b| a.max(b)),
        outlier_masks
            .iter()
            .map(|mask| mask.count_ones() as usize)
            .sum(),
    )
}

/// Values a block of [`inlier_range`] and of the outlier masks.
const LANES: usize = 16;

/// A row-major `[outputs, inputs]` weight as levels of a per-output scale.
pub(crate) struct QuantisedWeights {
    pub levels: Vec<i8>,
    pub scales: Vec<f32>,
}

pub(crate) fn quantise_weights(weight: &[f32], inputs: usize, levels: f32) -> QuantisedWeights {
    let mut quantised = Vec::with_capacity(weight.len());
    let scales = weight
        .chunks_exact(inputs)
        .map(|row| {
            let largest = row.iter().fold(0f32, |largest, w| largest.max(w.abs()));
            let inverse = if largest > 0.0 { levels / largest } else { 0.0 };
            quantised.extend(
                row.iter()
                    .map(|w| (w * inverse).round().clamp(-levels, levels) as i8),
            );
            largest / levels
        })
        .collect();
    QuantisedWeights {
        levels: quantised,
        scales,
    }
}

/// A dense layer's weights quantised and packed for one kernel.
pub(crate) struct Int8Weights {
    pub(crate) kernel: Int8Kernel,
    /// `outputs / panel` panels of `inputs / 4` groups × `panel` columns × 4 bytes.
    pub(crate) packed: Vec<i8>,
    pub(crate) scales: Vec<f32>,
    /// `Σ w` per output: times a row's zero point, what its i32 sum holds beyond the product.
    pub(crate) sums: Vec<i32>,
    /// The levels again, one input channel's outputs side by side, for the outliers.
    by_channel: Vec<i8>,
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
}

impl Int8Weights {
    /// Quantises and packs a row-major `[outputs, inputs]` weight; `None` when the shape does not
    /// fit the panels (outputs not a multiple of the panel, inputs not of 4).
    pub fn pack(weight: &[f32], outputs: usize, inputs: usize, kernel: Int8Kernel) -> Option<Self> {
        let panel = kernel.panel();
        if outputs == 0
            || !outputs.is_multiple_of(panel)
            || !inputs.is_multiple_of(GROUP)
            || weight.len() != outputs * inputs
        {
            return None;
        }
        let quantised = quantise_weights(weight, inputs, WEIGHT_LEVELS);
        let mut packed = Vec::with_capacity(weight.len());
        for first_column in (0..outputs).step_by(panel) {
            for group in (0..inputs).step_by(GROUP) {
                for column in first_column..first_column + panel {
                    let at = column * inputs + group;
                    packed.extend_from_slice(&quantised.levels[at..at + GROUP]);
                }
            }
        }
        let sums = quantised
            .levels
            .chunks_exact(inputs)
            .map(|row| row.iter().map(|&w| i32::from(w)).sum::<i32>())
            .collect();
        let by_channel = (0..inputs)
            .flat_map(|channel| (0..outputs).map(move |output| (channel, output)))
            .map(|(channel, output)| quantised.levels[output * inputs + channel])
            .collect();
        Some(Int8Weights {
            kernel,
            packed,
            scales: quantised.scales,
            sums,
            by_channel,
            inputs,
            outputs,
        })
    }

    /// `out[r] = bias + input[r] · Wᵀ` for every row of `input`. Panics unless `input` holds
    /// whole rows and `bias` and `out` are sized to them.
    pub fn matmul(&self, input: &[f32], bias: &[f32], out: &mut [f32]) {
        let levels = self.kernel.input_levels();
        match self.splits_rows(input.len(), bias, out) {
            true => input
                .par_chunks(ROWS_PER_TASK * self.inputs)
                .zip(out.par_chunks_mut(ROWS_PER_TASK * self.outputs))
                .for_each(|(input, out)| {
                    let rows = quantise_rows(input, self.inputs, levels);
                    self.panels(&rows, bias, 0..self.outputs, out);
                }),
            false => self.few_rows(&quantise_rows(input, self.inputs, levels), bias, out),
        }
    }

    /// [`Int8Weights::matmul`] of GELU(`input`), leaving GELU(`input`) in `input`.
    pub fn matmul_after_gelu(&self, input: &mut [f32], bias: &[f32], out: &mut [f32]) {
        let levels = self.kernel.input_levels();
        match self.splits_rows(input.len(), bias, out) {
            true => input
                .par_chunks_mut(ROWS_PER_TASK * self.inputs)
                .zip(out.par_chunks_mut(ROWS_PER_TASK * self.outputs))
                .for_each(|(input, out)| {
                    let rows = gelu_and_quantise_rows(input, self.inputs, levels);
                    self.panels(&rows, bias, 0..self.outputs, out);
                }),
            false => {
                let rows = gelu_and_quantise_rows(input, self.inputs, levels);
                self.few_rows(&rows, bias, out);
            }
        }
    }

    /// Whether `values` input values make enough rows to give every thread its own. Panics
    /// unless they are whole rows and `bias` and `out` are sized to them.
    fn splits_rows(&self, values: usize, bias: &[f32], out: &[f32]) -> bool {
        let rows = values / self.inputs;
        assert_eq!(values, rows * self.inputs, "input is not whole rows");
        assert_eq!(bias.len(), self.outputs, "bias length");
        assert_eq!(out.len(), rows * self.outputs, "output length");
        rows.div_ceil(ROWS_PER_TASK) >= rayon::current_num_threads()
    }

    /// Too few rows to give every thread its own: the panels are shared out instead, each task
    /// writing its columns of every row into a block of its own, copied into place after.
    fn few_rows(&self, rows: &QuantisedRows, bias: &[f32], out: &mut [f32]) {
        let row_count = rows.scales.len();
        let panel = self.kernel.panel();
        let panels_per_task = (self.outputs / panel).div_ceil(rayon::current_num_threads());
        let columns_per_task = panels_per_task * panel;
        let blocks: Vec<(usize, Vec<f32>)> = (0..self.outputs)
            .step_by(columns_per_task)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|first| {
                let columns = first..(first + columns_per_task).min(self.outputs);
                let mut block = vec![0f32; row_count * columns.len()];
                self.panels(rows, bias, columns, &mut block);
                (first, block)
            })
            .collect();
        for (first, block) in blocks {
            let width = block.len() / row_count.max(1);
            for (out_row, block_row) in out
                .chunks_exact_mut(self.outputs)
                .zip(block.chunks_exact(width))
            {
                out_row[first..first + width].copy_from_slice(block_row);
            }
        }
    }

    /// `out[r][c - columns.start] = bias[c] + row r · column c` for the columns (whole panels)
    /// of `columns`, `out` having one row of `columns.len()` values per input row.
    fn panels(
        &self,
        rows: &QuantisedRows,
        bias: &[f32],
        columns: std::ops::Range<usize>,
        out: &mut [f32],
    ) {
        let product = Product {
            weights: self,
            input: &rows.values,
            input_scales: &rows.scales,
            zero_points: &rows.zero_points,
            bias,
            columns: columns.clone(),
        };
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::Avx512Vnni => int8_kernels::avx512_vnni(&product, out),
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::AvxVnni => int8_kernels::avx_vnni(&product, out),
            #[cfg(target_arch = "x86_64")]
            Int8Kernel::Avx2 => int8_kernels::avx2(&product, out),
            _ => portable(&product, out),
        }
        self.add_outliers(&rows.outliers, columns, out);
    }

    /// Adds each outlier times its channel's weights to its row's `columns`, in f32.
    fn add_outliers(&self, outliers: &[Outlier], columns: std::ops::Range<usize>, out: &mut [f32]) {
        let width = columns.len();
        for outlier in outliers {
            let weights = &self.by_channel[outlier.channel * self.outputs..][columns.clone()];
            let scales = &self.scales[columns.clone()];
            let out_row = &mut out[outlier.row * width..(outlier.row + 1) * width];
            add_scaled_levels(out_row, weights, scales, outlier.value);
        }
    }
}

simd_versions! {
    /// `out += value · scale · level` along a row: an outlier's share of every output.
    fn add_scaled_levels(out: &mut [f32], levels: &[i8], scales: &[f32], value: f32) {
        for ((out, &level), &scale) in out.iter_mut().zip(levels).zip(scales) {
            *out += value * scale * f32::from(level);
        }
    }
}

/// One call's operands: quantised input rows times some of the weights' panels.
pub(crate) struct Product<'a> {
    pub weights: &'a Int8Weights,
    pub input: &'a [u8],
    pub input_scales: &'a [f32],
    pub zero_points: &'a [i32],
    pub bias: &'a [f32],
    /// Output columns, whole panels.
    pub columns: std::ops::Range<usize>,
}

impl Product<'_> {
    /// The packed words of the panel starting at output column `first`.
    pub fn panel_weights(&self, first: usize) -> &[i8] {
        let size = self.weights.kernel.panel() * self.weights.inputs;
        &self.packed_from(first)[..size]
    }

    fn packed_from(&self, first: usize) -> &[i8] {
        &self.weights.packed[first * self.weights.inputs..]
    }

    /// The float result of one output's i32 sum: the zero point taken back out, both scales
    /// and the bias applied, rounded as the SIMD kernels' fused multiply-add rounds.
    pub fn finish(&self, sum: i32, row: usize, column: usize) -> f32 {
        let scale = self.input_scales[row] * self.weights.scales[column];
        let offset = self.zero_points[row] * self.weights.sums[column];
        ((sum - offset) as f32).mul_add(scale, self.bias[column])
    }
}

/// The kernels' arithmetic in plain Rust: the fallback, and the reference their tests compare
/// against.
fn portable(product: &Product, out: &mut [f32]) {
    let inputs = product.weights.inputs;
    let panel = product.weights.kernel.panel();
    let width = product.columns.len();
    for (row, (x, out_row)) in product
        .input
        .chunks_exact(inputs)
        .zip(out.chunks_exact_mut(width))
        .enumerate()
    {
        for first in product.columns.clone().step_by(panel) {
            let weights = product.panel_weights(first);
            for lane in 0..panel {
                let sum: i32 = x
                    .chunks_exact(GROUP)
                    .zip(weights.chunks_exact(GROUP * panel))
                    .map(|(x, group)| {
                        let w = &group[lane * GROUP..(lane + 1) * GROUP];
                        x.iter()
                            .zip(w)
                            .map(|(&x, &w)| i32::from(x) * i32::from(w))
                            .sum::<i32>()
                    })
                    .sum();
                let column = first + lane;
                out_row[column - product.columns.start] = product.finish(sum, row, column);
            }
        }
    }
}

#[cfg(test)]
mod tests;
