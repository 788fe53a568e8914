//! Adaptive fusion's gate: the BM25 weight of one query, from that query's relevance signals.
//! The fitted values are generated into `gate_model.rs` by `scripts/fit-fusion.py`.

use shiori_core::RelevanceSignals;

/// How many signals the gate reads (the order of [`gate_features`]).
pub const GATE_FEATURES: usize = 4;

/// The gate's inputs, in the order the fitting script reads them. Each is scale-free: it does
/// not move with the corpus size, the raw BM25 range or the embedder's cosine range.
pub fn gate_features(signals: &RelevanceSignals) -> [f32; GATE_FEATURES] {
    [
        signals.bm25_coverage,
        signals.overlap,
        signals.japanese,
        signals.bm25_relative,
    ]
}

/// A log-linear model of normalised fusion's BM25 weight over standardised signals:
/// `exp(bias + Σ weight · (signal − mean) / scale)`, clamped to `[LEAST_WEIGHT, MOST_WEIGHT]`.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionGate {
    pub means: [f32; GATE_FEATURES],
    pub scales: [f32; GATE_FEATURES],
    pub weights: [f32; GATE_FEATURES],
    pub bias: f32,
}

/// The weights the gate was fitted over (`scripts/fit-fusion.py`'s grid): outside them the
/// fit says nothing.
pub const LEAST_WEIGHT: f32 = 0.01;
pub const MOST_WEIGHT: f32 = 100.0;

impl FusionGate {
    /// The BM25 weight for a query with these signals; without signals (no dense candidate)
    /// the weight at the signals' means.
    pub fn bm25_weight(&self, signals: Option<&RelevanceSignals>) -> f32 {
        let log_weight = signals.map_or(self.bias, |signals| {
            let x = gate_features(signals);
            (0..GATE_FEATURES).fold(self.bias, |sum, i| {
                sum + self.weights[i] * (x[i] - self.means[i]) / self.scales[i]
            })
        });
        log_weight.exp().clamp(LEAST_WEIGHT, MOST_WEIGHT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GATE: FusionGate = FusionGate {
        means: [1.0, 2.0, 0.5, 2.0],
        scales: [0.5, 1.0, 0.5, 2.0],
        weights: [0.5, 1.0, 0.25, 0.5],
        bias: 1.0,
    };

    fn signals(bm25_coverage: f32, overlap: f32, japanese: f32) -> RelevanceSignals {
        RelevanceSignals {
            bm25_coverage,
            overlap,
            japanese,
            bm25_relative: 2.0,
            ..RelevanceSignals::default()
        }
    }

    #[test]
    fn the_weight_is_the_exponent_of_the_standardised_sum() {
        let at_means = GATE.bm25_weight(Some(&signals(1.0, 2.0, 0.5)));
        assert!((at_means - 1f32.exp()).abs() < 1e-5);
        let one_scale_up = GATE.bm25_weight(Some(&signals(1.0, 3.0, 0.5)));
        assert!(
            (one_scale_up - 2f32.exp()).abs() < 1e-5,
            "one scale up adds its weight, 1"
        );
        let japanese = GATE.bm25_weight(Some(&signals(1.0, 2.0, 1.0)));
        assert!((japanese - 1.25f32.exp()).abs() < 1e-5);
        let standing_out = RelevanceSignals {
            bm25_relative: 6.0,
            ..signals(1.0, 2.0, 0.5)
        };
        assert!(
            (GATE.bm25_weight(Some(&standing_out)) - 2f32.exp()).abs() < 1e-5,
            "bm25_relative two scales above its mean adds twice its weight, 0.5"
        );
        assert_eq!(GATE.bm25_weight(None), at_means, "no signals: the means");
    }

    #[test]
    fn the_weight_stays_within_the_fitted_grid() {
        assert_eq!(
            GATE.bm25_weight(Some(&signals(1.0, 100.0, 0.5))),
            MOST_WEIGHT
        );
        assert_eq!(
            GATE.bm25_weight(Some(&signals(1.0, -100.0, 0.5))),
            LEAST_WEIGHT
        );
    }
}
