use super::*;
use crate::bert::linear::reference_product;

const INPUTS: usize = 68;
const OUTPUTS: usize = 64;

fn value(i: usize, salt: usize) -> f32 {
    ((i * 7919 + salt) % 1000) as f32 / 500.0 - 1.0
}

fn weight() -> Vec<f32> {
    (0..OUTPUTS * INPUTS).map(|i| value(i, 11)).collect()
}

fn bias() -> Vec<f32> {
    (0..OUTPUTS).map(|i| value(i, 5)).collect()
}

/// The quantised product summed row by row from unpacked levels, with the input levels less
/// their zero point, then the outliers added in f32: what every kernel must reproduce to the bit.
fn integer_reference(input: &[f32], weight: &[f32], bias: &[f32], kernel: Int8Kernel) -> Vec<f32> {
    let rows = quantise_rows(input, INPUTS, kernel.input_levels());
    let weights = quantise_weights(weight, INPUTS, WEIGHT_LEVELS);
    let mut out = Vec::new();
    let row_quantisation = rows.scales.iter().zip(&rows.zero_points);
    for (x, (&input_scale, &zero_point)) in rows.values.chunks_exact(INPUTS).zip(row_quantisation) {
        for ((w, &weight_scale), &bias) in weights
            .levels
            .chunks_exact(INPUTS)
            .zip(&weights.scales)
            .zip(bias)
        {
            let sum: i32 = x
                .iter()
                .zip(w)
                .map(|(&x, &w)| (i32::from(x) - zero_point) * i32::from(w))
                .sum();
            out.push((sum as f32).mul_add(input_scale * weight_scale, bias));
        }
    }
    for outlier in &rows.outliers {
        for (output, value) in out[outlier.row * OUTPUTS..][..OUTPUTS]
            .iter_mut()
            .enumerate()
        {
            let level = weights.levels[output * INPUTS + outlier.channel];
            *value += outlier.value * weights.scales[output] * f32::from(level);
        }
    }
    out
}

/// Rows like `value`'s with every 23rd value 40 times larger: the outliers of a LayerNorm output.
fn rows_with_outliers(rows: usize) -> Vec<f32> {
    (0..rows * INPUTS)
        .map(|i| value(i, 3) * if i % 23 == 0 { 40.0 } else { 1.0 })
        .collect()
}

/// Enough rows for a task a thread and some over: the path that splits rows, not panels.
fn row_parallel() -> usize {
    ROWS_PER_TASK * rayon::current_num_threads() + 5
}

fn run(kernel: Int8Kernel, input: &[f32], weight: &[f32], bias: &[f32]) -> Vec<f32> {
    let packed =
        Int8Weights::pack(weight, OUTPUTS, INPUTS, kernel).expect("shape fits every panel");
    let mut out = vec![f32::NAN; input.len() / INPUTS * OUTPUTS];
    packed.matmul(input, bias, &mut out);
    out
}

#[test]
fn every_kernel_on_this_cpu_reproduces_the_integer_reference_to_the_bit() {
    let kernels = Int8Kernel::available();
    #[cfg(target_arch = "x86_64")]
    assert!(
        kernels.contains(&Int8Kernel::Avx2),
        "every CI machine of the project has AVX2"
    );
    // 1–9 rows: every tile height and a second tile; then the row-parallel path.
    for rows in (1..=9).chain([row_parallel()]) {
        let input: Vec<f32> = (0..rows * INPUTS)
            .map(|i| value(i, 3) * (1 + i % 3) as f32)
            .collect();
        for &kernel in &kernels {
            let expected = integer_reference(&input, &weight(), &bias(), kernel);
            assert_eq!(
                run(kernel, &input, &weight(), &bias()),
                expected,
                "{kernel:?}, {rows} rows"
            );
        }
    }
}

#[test]
fn gelu_inside_the_product_is_gelu_then_the_product_to_the_bit() {
    let packed = Int8Weights::pack(&weight(), OUTPUTS, INPUTS, Int8Kernel::detect())
        .expect("shape fits every panel");
    for rows in [3, row_parallel()] {
        let input = rows_with_outliers(rows);
        let mut activated = input.clone();
        math::gelu_in_place(&mut activated);
        let mut expected = vec![f32::NAN; rows * OUTPUTS];
        packed.matmul(&activated, &bias(), &mut expected);
        let mut in_place = input.clone();
        let mut fused = vec![f32::NAN; rows * OUTPUTS];
        packed.matmul_after_gelu(&mut in_place, &bias(), &mut fused);
        assert_eq!(fused, expected, "{rows} rows");
        assert_eq!(
            in_place, activated,
            "{rows} rows: the input keeps GELU's values"
        );
    }
}

#[test]
fn the_largest_levels_do_not_saturate() {
    // Every input at its top level against weights at ±127: the case where AVX2's i16 pair
    // sums would overflow with 8-bit inputs.
    let input = vec![1.0f32; 3 * INPUTS];
    let weight: Vec<f32> = (0..OUTPUTS * INPUTS)
        .map(|i| if i % 5 == 0 { -1.0 } else { 1.0 })
        .collect();
    for kernel in Int8Kernel::available() {
        let expected = integer_reference(&input, &weight, &bias(), kernel);
        assert_eq!(
            run(kernel, &input, &weight, &bias()),
            expected,
            "{kernel:?}"
        );
        let exact = reference_product(&input, &weight, &bias(), INPUTS);
        for (got, want) in run(kernel, &input, &weight, &bias()).iter().zip(&exact) {
            assert!((got - want).abs() < 1e-3, "{kernel:?}: {got} vs {want}");
        }
    }
}

/// Asserts every kernel's product of `input` within 2 % of the f32 product's largest value:
/// 68 products of values each off by up to half a level (1/255 or 1/127 of their range).
fn assert_close_to_f32(input: &[f32]) {
    let exact = reference_product(input, &weight(), &bias(), INPUTS);
    let scale = exact.iter().fold(0f32, |m, v| m.max(v.abs()));
    for kernel in Int8Kernel::available() {
        let got = run(kernel, input, &weight(), &bias());
        let error = got
            .iter()
            .zip(&exact)
            .map(|(g, e)| (g - e).abs())
            .fold(0f32, f32::max);
        assert!(
            error < 0.02 * scale,
            "{kernel:?}: largest error {error} of {scale}"
        );
    }
}

#[test]
fn the_quantised_product_stays_close_to_the_f32_one() {
    let input: Vec<f32> = (0..20 * INPUTS).map(|i| value(i, 3)).collect();
    assert_close_to_f32(&input);
}

#[test]
fn outliers_are_multiplied_in_f32_and_keep_the_rest_of_their_row_fine() {
    let input = rows_with_outliers(6);
    let quantised = quantise_rows(&input, INPUTS, 255.0);
    assert!(!quantised.outliers.is_empty());
    for outlier in &quantised.outliers {
        assert_eq!(
            (outlier.row * INPUTS + outlier.channel) % 23,
            0,
            "{outlier:?}"
        );
    }
    assert_close_to_f32(&input);
}

#[test]
fn rows_spread_256_levels_over_their_range_with_zero_exact() {
    // Ten values so that none is six times the row's root mean square.
    let mut input = vec![-0.5, 2.05, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    input.extend([0.0; 10]);
    let rows = quantise_rows(&input, 10, 255.0);
    assert_eq!(rows.scales, vec![2.55 / 255.0, 0.0]);
    assert!(rows.outliers.is_empty());
    // −0.5 is the least level; 0 stands at 50 levels above it, 2.05 at the top, 1.0 at 150.
    assert_eq!(rows.zero_points, vec![50, 0]);
    assert_eq!(rows.values[..4], [0, 255, 50, 150]);
    assert!(rows.values[10..].iter().all(|&v| v == 0));
}

#[test]
fn rows_of_one_sign_keep_zero_at_an_end_of_their_levels() {
    let rows = quantise_rows(&[0.6, 1.0, -0.6, -1.0], 2, 255.0);
    assert_eq!(rows.zero_points, vec![0, 255]);
    assert_eq!(rows.values, vec![153, 255, 102, 0]);
}

#[test]
fn a_value_six_times_its_rows_root_mean_square_is_an_outlier() {
    let mut row = vec![1.0f32; 100];
    row[7] = -20.0;
    let rows = quantise_rows(&row, 100, 255.0);
    let outlier = Outlier {
        row: 0,
        channel: 7,
        value: -20.0,
    };
    assert_eq!(rows.outliers, vec![outlier]);
    assert_eq!(rows.zero_points, vec![0]);
    assert_eq!(rows.values[7], 0, "an outlier stands at the zero point");
    assert_eq!(rows.scales, vec![1.0 / 255.0]);
}

#[test]
fn shapes_outside_the_panels_are_refused() {
    let kernel = Int8Kernel::Portable;
    assert!(Int8Weights::pack(&[0.0; 17 * 4], 17, 4, kernel).is_none());
    assert!(Int8Weights::pack(&[0.0; 16 * 6], 16, 6, kernel).is_none());
    assert!(Int8Weights::pack(&[0.0; 16 * 8], 16, 8, kernel).is_some());
}
