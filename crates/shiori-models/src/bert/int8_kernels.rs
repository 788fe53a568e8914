//! The x86 micro-kernels of [`super::int8`]: a tile of input rows times one panel of packed
//! weights, summed in i32 registers, then the zero points taken out and scaled back to f32 in the
//! registers. Each public
//! entry checks its CPU features and the operands' shapes before any raw access.

use std::arch::x86_64::*;

use super::int8::{Product, GROUP};

/// Rows a 256-bit tile multiplies at once: 4 × 2 accumulators, 2 weight registers, the input
/// broadcast and the constant of ones fit AVX2's 16 registers.
const ROWS_256: usize = 4;
/// Rows a 512-bit tile multiplies: 8 × 2 accumulators and operands fit AVX-512's 32 registers.
const ROWS_512: usize = 8;

/// `out = product` on AVX-512 VNNI. Panics if the CPU lacks it or the shapes disagree.
pub(crate) fn avx512_vnni(product: &Product, out: &mut [f32]) {
    assert!(
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni"),
        "the AVX-512 VNNI kernel needs AVX-512F, BW and VNNI"
    );
    for_each_tile(product, out, 32, ROWS_512, |tile, rows, out| {
        // SAFETY: the CPU features were checked above; `for_each_tile` checked the shapes.
        unsafe {
            match rows {
                8 => tile_512::<8>(tile, out),
                7 => tile_512::<7>(tile, out),
                6 => tile_512::<6>(tile, out),
                5 => tile_512::<5>(tile, out),
                4 => tile_512::<4>(tile, out),
                3 => tile_512::<3>(tile, out),
                2 => tile_512::<2>(tile, out),
                _ => tile_512::<1>(tile, out),
            }
        }
    });
}

/// `out = product` on AVX-VNNI. Panics if the CPU lacks it or the shapes disagree.
pub(crate) fn avx_vnni(product: &Product, out: &mut [f32]) {
    assert!(
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("avxvnni"),
        "the AVX-VNNI kernel needs AVX2, FMA and AVX-VNNI"
    );
    for_each_tile(product, out, 16, ROWS_256, |tile, rows, out| {
        // SAFETY: the CPU features were checked above; `for_each_tile` checked the shapes.
        unsafe {
            match rows {
                4 => tile_avx_vnni::<4>(tile, out),
                3 => tile_avx_vnni::<3>(tile, out),
                2 => tile_avx_vnni::<2>(tile, out),
                _ => tile_avx_vnni::<1>(tile, out),
            }
        }
    });
}

/// `out = product` on AVX2. Panics if the CPU lacks it or the shapes disagree.
pub(crate) fn avx2(product: &Product, out: &mut [f32]) {
    assert!(
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
        "the AVX2 int8 kernel needs AVX2 and FMA"
    );
    for_each_tile(product, out, 16, ROWS_256, |tile, rows, out| {
        // SAFETY: the CPU features were checked above; `for_each_tile` checked the shapes.
        unsafe {
            match rows {
                4 => tile_avx2::<4>(tile, out),
                3 => tile_avx2::<3>(tile, out),
                2 => tile_avx2::<2>(tile, out),
                _ => tile_avx2::<1>(tile, out),
            }
        }
    });
}

/// One micro-kernel call's operands: `rows` input rows times one panel.
struct Tile<'a> {
    input: &'a [u8],
    input_scales: &'a [f32],
    zero_points: &'a [i32],
    weights: &'a [i8],
    scales: &'a [f32],
    weight_sums: &'a [i32],
    bias: &'a [f32],
    inputs: usize,
    /// Values from one output row to the next.
    out_stride: usize,
}

/// Cuts the product into tiles of at most `max_rows` rows × one panel of `panel` columns and
/// hands each to `run` with its row count and its output, after checking every length a
/// kernel reads or writes through raw pointers.
fn for_each_tile(
    product: &Product,
    out: &mut [f32],
    panel: usize,
    max_rows: usize,
    run: impl Fn(&Tile, usize, &mut [f32]),
) {
    let weights = product.weights;
    let inputs = weights.inputs;
    let width = product.columns.len();
    let rows = product.input_scales.len();
    assert_eq!(
        weights.kernel.panel(),
        panel,
        "weights packed for another panel"
    );
    assert_eq!(product.input.len(), rows * inputs, "input rows");
    assert_eq!(product.zero_points.len(), rows, "zero points");
    assert_eq!(out.len(), rows * width, "output rows");
    assert!(product.columns.end <= weights.outputs && inputs.is_multiple_of(GROUP));
    assert!(width.is_multiple_of(panel), "columns are not whole panels");
    for first in product.columns.clone().step_by(panel) {
        let columns = first..first + panel;
        for first_row in (0..rows).step_by(max_rows) {
            let tile_rows = (rows - first_row).min(max_rows);
            let tile = Tile {
                input: &product.input[first_row * inputs..(first_row + tile_rows) * inputs],
                input_scales: &product.input_scales[first_row..first_row + tile_rows],
                zero_points: &product.zero_points[first_row..first_row + tile_rows],
                weights: product.panel_weights(first),
                scales: &weights.scales[columns.clone()],
                weight_sums: &weights.sums[columns.clone()],
                bias: &product.bias[columns.clone()],
                inputs,
                out_stride: width,
            };
            let start = first_row * width + (first - product.columns.start);
            let end = start + (tile_rows - 1) * width + panel;
            run(&tile, tile_rows, &mut out[start..end]);
        }
    }
}

impl Tile<'_> {
    /// Panics unless the tile holds `rows` input rows and a panel of `panel` columns, and `out`
    /// reaches the panel's last column in the last row.
    fn check(&self, rows: usize, panel: usize, out: &[f32]) {
        assert_eq!(self.input.len(), rows * self.inputs, "tile input");
        assert_eq!(self.input_scales.len(), rows, "tile input scales");
        assert_eq!(self.zero_points.len(), rows, "tile zero points");
        assert_eq!(self.weights.len(), self.inputs * panel, "tile weights");
        assert!(self.scales.len() == panel && self.weight_sums.len() == panel);
        assert_eq!(self.bias.len(), panel, "tile bias");
        assert!(
            out.len() > (rows - 1) * self.out_stride + panel - 1,
            "tile output"
        );
    }

    /// Four input bytes of `row` from position `group · 4`, as one word every lane repeats.
    ///
    /// # Safety
    /// `row` must be below the tile's rows and `group` below `inputs / 4` ([`Tile::check`]).
    unsafe fn input_word(&self, row: usize, group: usize) -> i32 {
        // SAFETY: row · inputs + 4 · group + 4 ≤ rows · inputs = input.len() (the caller's bounds).
        unsafe {
            self.input
                .as_ptr()
                .add(row * self.inputs + group * GROUP)
                .cast::<i32>()
                .read_unaligned()
        }
    }
}

/// `ROWS` rows × a 16-column panel with AVX2: `vpmaddubsw` adds pairs of u8 × i8 products into
/// i16 (no saturation: the weights keep 7 bits), `vpmaddwd` by ones pairs those into i32.
///
/// # Safety
/// The CPU must have AVX2 and FMA. Panics (before any raw access) if the shapes disagree.
#[target_feature(enable = "avx2,fma")]
unsafe fn tile_avx2<const ROWS: usize>(tile: &Tile, out: &mut [f32]) {
    let ones = _mm256_set1_epi16(1);
    // SAFETY: the caller vouched for AVX2 and FMA; `tile_256` checks the shapes.
    unsafe {
        tile_256::<ROWS>(tile, out, |sum, x, w| {
            _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), ones))
        })
    }
}

/// `ROWS` rows × a 16-column panel with AVX-VNNI's `vpdpbusd`: four u8 × i8 products into each
/// i32 lane.
///
/// # Safety
/// The CPU must have AVX2, FMA and AVX-VNNI. Panics (before any raw access) if the shapes
/// disagree.
#[target_feature(enable = "avx2,fma,avxvnni")]
unsafe fn tile_avx_vnni<const ROWS: usize>(tile: &Tile, out: &mut [f32]) {
    // SAFETY: the caller vouched for the features; `tile_256` checks the shapes.
    unsafe { tile_256::<ROWS>(tile, out, |sum, x, w| _mm256_dpbusd_avx_epi32(sum, x, w)) }
}

/// The 256-bit tile around one multiply-accumulate step `dot(sum, inputs u8, weights i8)`,
/// inlined into each caller so the step compiles with the caller's features.
///
/// # Safety
/// The CPU must have AVX2, FMA and whatever `dot` uses. Panics if the shapes disagree.
#[inline(always)]
unsafe fn tile_256<const ROWS: usize>(
    tile: &Tile,
    out: &mut [f32],
    dot: impl Fn(__m256i, __m256i, __m256i) -> __m256i,
) {
    const LANES: usize = 8;
    tile.check(ROWS, 2 * LANES, out);
    // SAFETY: the caller vouched for the CPU features; `check` bounded every offset below:
    // group < inputs / 4, so each weight load of 32 bytes lies inside the panel's
    // inputs × 16 bytes, each input word inside its row, and each store inside `out`.
    unsafe {
        let mut sums = [[_mm256_setzero_si256(); 2]; ROWS];
        let weights = tile.weights.as_ptr();
        for group in 0..tile.inputs / GROUP {
            let columns = weights.add(group * GROUP * 2 * LANES).cast::<__m256i>();
            let w = [
                _mm256_loadu_si256(columns),
                _mm256_loadu_si256(columns.add(1)),
            ];
            for (row, sums) in sums.iter_mut().enumerate() {
                let x = _mm256_set1_epi32(tile.input_word(row, group));
                sums[0] = dot(sums[0], x, w[0]);
                sums[1] = dot(sums[1], x, w[1]);
            }
        }
        for half in 0..2 {
            let at = half * LANES;
            let weight_sums = _mm256_loadu_si256(tile.weight_sums.as_ptr().add(at).cast());
            let scales = _mm256_loadu_ps(tile.scales.as_ptr().add(at));
            let bias = _mm256_loadu_ps(tile.bias.as_ptr().add(at));
            for (row, sums) in sums.iter().enumerate() {
                let zero_point = _mm256_set1_epi32(tile.zero_points[row]);
                let offset = _mm256_mullo_epi32(zero_point, weight_sums);
                let sum = _mm256_cvtepi32_ps(_mm256_sub_epi32(sums[half], offset));
                let scale = _mm256_mul_ps(_mm256_set1_ps(tile.input_scales[row]), scales);
                let value = _mm256_fmadd_ps(sum, scale, bias);
                _mm256_storeu_ps(out.as_mut_ptr().add(row * tile.out_stride + at), value);
            }
        }
    }
}

/// `ROWS` rows × a 32-column panel with AVX-512 VNNI's `vpdpbusd`.
///
/// # Safety
/// The CPU must have AVX-512F, BW and VNNI. Panics (before any raw access) if the shapes
/// disagree.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile_512<const ROWS: usize>(tile: &Tile, out: &mut [f32]) {
    const LANES: usize = 16;
    tile.check(ROWS, 2 * LANES, out);
    // SAFETY: the caller vouched for the CPU features; `check` bounded every offset below:
    // group < inputs / 4, so each weight load of 64 bytes lies inside the panel's
    // inputs × 32 bytes, each input word inside its row, and each store inside `out`.
    unsafe {
        let mut sums = [[_mm512_setzero_si512(); 2]; ROWS];
        let weights = tile.weights.as_ptr();
        for group in 0..tile.inputs / GROUP {
            let columns = weights.add(group * GROUP * 2 * LANES).cast::<__m512i>();
            let w = [
                _mm512_loadu_si512(columns),
                _mm512_loadu_si512(columns.add(1)),
            ];
            for (row, sums) in sums.iter_mut().enumerate() {
                let x = _mm512_set1_epi32(tile.input_word(row, group));
                sums[0] = _mm512_dpbusd_epi32(sums[0], x, w[0]);
                sums[1] = _mm512_dpbusd_epi32(sums[1], x, w[1]);
            }
        }
        for half in 0..2 {
            let at = half * LANES;
            let weight_sums = _mm512_loadu_si512(tile.weight_sums.as_ptr().add(at).cast());
            let scales = _mm512_loadu_ps(tile.scales.as_ptr().add(at));
            let bias = _mm512_loadu_ps(tile.bias.as_ptr().add(at));
            for (row, sums) in sums.iter().enumerate() {
                let zero_point = _mm512_set1_epi32(tile.zero_points[row]);
                let offset = _mm512_mullo_epi32(zero_point, weight_sums);
                let sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(sums[half], offset));
                let scale = _mm512_mul_ps(_mm512_set1_ps(tile.input_scales[row]), scales);
                let value = _mm512_fmadd_ps(sum, scale, bias);
                _mm512_storeu_ps(out.as_mut_ptr().add(row * tile.out_stride + at), value);
            }
        }
    }
}
