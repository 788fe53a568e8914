use shiori_core::TimeDecay;

const SECONDS_PER_DAY: f32 = 86_400.0;

/// The multiplier time decay applies to a chunk last modified at `modified` (Unix seconds):
/// `(1 - weight) + weight * 0.5^(age_days / half_life_days)`. Future times count as age 0.
pub fn decay_factor(decay: &TimeDecay, modified: i64, now: i64) -> f32 {
    let age_days = (now - modified).max(0) as f32 / SECONDS_PER_DAY;
    let half_life = decay.half_life_days.max(f32::EPSILON);
    let weight = decay.weight.clamp(0.0, 1.0);
    (1.0 - weight) + weight * 0.5f32.powf(age_days / half_life)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_the_weighted_part_every_half_life() {
        let decay = TimeDecay {
            weight: 0.4,
            half_life_days: 30.0,
        };
        let now = 1_000_000_000;
        assert!((decay_factor(&decay, now, now) - 1.0).abs() < 1e-6);
        let month_old = now - 30 * 86_400;
        assert!((decay_factor(&decay, month_old, now) - 0.8).abs() < 1e-5);
        assert!((decay_factor(&decay, now + 500, now) - 1.0).abs() < 1e-6);
        let ancient = now - 3_000 * 86_400;
        assert!((decay_factor(&decay, ancient, now) - 0.6).abs() < 1e-4);
    }
}
