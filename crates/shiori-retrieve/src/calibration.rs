//! The calibrated refusal model's form: a logistic regression over standardised relevance
//! signals, with the cuts its targets map to. The fitted values are generated into
//! `refusal_model.rs`; `refusal.rs` decides with them.

use shiori_core::RelevanceSignals;

/// A logistic regression over standardised [`RelevanceSignals`], fitted by
/// `scripts/fit-refusal.py` for one embedder, with the cuts its targets map to.
#[derive(Debug, Clone, PartialEq)]
pub struct RefusalModel {
    /// The embedder's `model_id`: cosines and so the model belong to it.
    pub embedder: &'static str,
    pub means: [f32; FEATURES],
    pub scales: [f32; FEATURES],
    pub weights: [f32; FEATURES],
    pub bias: f32,
    /// The log-odds where the fitted answer rate equals the fitted no-answer accuracy.
    pub balanced_cut: f32,
    /// The log-odds at each percentile 0..=100 of the answerable questions it was fitted on.
    pub answerable_percentiles: [f32; 101],
}

/// How many signals the model reads (the order of [`features`]).
pub const FEATURES: usize = 8;

/// The model's inputs in the order the fitting script reads them. `bm25_z` and `query_length`
/// stay out: they did not transfer to a set the model was not fitted on (the script says how
/// much). `japanese` moves the cut with the question's language, where e5's cosines sit higher;
/// `sentence_coverage` tells a chunk that answers from one that is only on the question's topic.
pub fn features(signals: &RelevanceSignals) -> [f32; FEATURES] {
    [
        signals.best_cosine,
        signals.cosine_margin,
        signals.cosine_z,
        signals.bm25_relative,
        signals.bm25_gap,
        signals.agreement,
        signals.japanese,
        signals.sentence_coverage,
    ]
}

/// The features that say nothing when the question and the page are in two languages (indexes
/// into [`features`]): everything that counts shared words. The cosine keeps its meaning (lower
/// across languages, so such a question needs a closer page to be answered, and one off every
/// page's topic is still refused), and so do its margin and z-score.
const NOT_ACROSS_LANGUAGES: [usize; 4] = [3, 4, 5, 7];

impl RefusalModel {
    /// The log-odds that something relevant was retrieved. For a question over a page in the
    /// other language the features that count shared words are taken at their means: they are
    /// missing, not low, and the model judges by the embedding's signals.
    pub fn log_odds(&self, signals: &RelevanceSignals) -> f32 {
        let x = features(signals);
        let across = signals.cross_language > 0.5;
        (0..FEATURES)
            .filter(|i| !(across && NOT_ACROSS_LANGUAGES.contains(i)))
            .fold(self.bias, |sum, i| {
                sum + self.weights[i] * (x[i] - self.means[i]) / self.scales[i]
            })
    }

    /// The log-odds below which a fraction `1 - rate` of the answerable questions fell,
    /// interpolated between percentiles.
    pub fn answer_rate_cut(&self, rate: f32) -> f32 {
        let position = ((1.0 - rate) * 100.0).clamp(0.0, 100.0);
        let low = (position.floor() as usize).min(99);
        let table = &self.answerable_percentiles;
        table[low] + (position - low as f32) * (table[low + 1] - table[low])
    }
}
