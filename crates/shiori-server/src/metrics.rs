//! Prometheus text exposition, written by hand: a few counters and one histogram need no
//! client library.

use shiori_store::StoreStats;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Upper bounds of the query latency buckets, in seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Debug, Default)]
pub struct Metrics {
    /// (route, method, status) → count.
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// (operation, outcome) → count.
    writes: Mutex<BTreeMap<(String, &'static str), u64>>,
    query_buckets: [AtomicU64; LATENCY_BUCKETS.len()],
    query_count: AtomicU64,
    query_micros_sum: AtomicU64,
}

impl Metrics {
    pub fn record_request(&self, route: &str, method: &str, status: u16) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests
                .entry((route.to_string(), method.to_string(), status))
                .or_default() += 1;
        }
    }

    pub fn record_write(&self, operation: &str, ok: bool) {
        let outcome = if ok { "ok" } else { "failed" };
        if let Ok(mut writes) = self.writes.lock() {
            *writes.entry((operation.to_string(), outcome)).or_default() += 1;
        }
    }

    pub fn record_query(&self, seconds: f64) {
        for (bucket, bound) in self.query_buckets.iter().zip(LATENCY_BUCKETS) {
            if seconds <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.query_count.fetch_add(1, Ordering::Relaxed);
        self.query_micros_sum
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }

    /// The exposition text, with the index sizes of the serving engine.
    pub fn render(&self, index: Option<&StoreStats>) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP shiori_http_requests_total HTTP requests by route, method and status.\n",
        );
        out.push_str("# TYPE shiori_http_requests_total counter\n");
        if let Ok(requests) = self.requests.lock() {
            for ((route, method, status), count) in requests.iter() {
                let _ = writeln!(
                    out,
                    "shiori_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {count}",
                    escape(route),
                    escape(method)
                );
            }
        }
        out.push_str("# HELP shiori_index_writes_total Reindexes, uploads, deletes and evaluations by outcome.\n");
        out.push_str("# TYPE shiori_index_writes_total counter\n");
        if let Ok(writes) = self.writes.lock() {
            for ((operation, outcome), count) in writes.iter() {
                let _ = writeln!(
                    out,
                    "shiori_index_writes_total{{operation=\"{}\",outcome=\"{outcome}\"}} {count}",
                    escape(operation)
                );
            }
        }
        out.push_str("# HELP shiori_query_duration_seconds Time to answer /api/query.\n");
        out.push_str("# TYPE shiori_query_duration_seconds histogram\n");
        for (bucket, bound) in self.query_buckets.iter().zip(LATENCY_BUCKETS) {
            let _ = writeln!(
                out,
                "shiori_query_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.query_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "shiori_query_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = self.query_micros_sum.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "shiori_query_duration_seconds_sum {sum}");
        let _ = writeln!(out, "shiori_query_duration_seconds_count {count}");
        if let Some(stats) = index {
            for (name, value) in [
                ("files", stats.files),
                ("documents", stats.documents),
                ("chunks", stats.chunks),
            ] {
                let _ = writeln!(
                    out,
                    "# HELP shiori_index_{name} {name} in the serving index."
                );
                let _ = writeln!(out, "# TYPE shiori_index_{name} gauge");
                let _ = writeln!(out, "shiori_index_{name} {value}");
            }
        }
        out
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_a_cumulative_histogram() {
        let metrics = Metrics::default();
        metrics.record_request("/api/query", "POST", 200);
        metrics.record_request("/api/query", "POST", 200);
        metrics.record_request("/api/query", "POST", 400);
        metrics.record_query(0.02);
        metrics.record_query(3.0);
        let text = metrics.render(None);
        assert!(text.contains(
            "shiori_http_requests_total{route=\"/api/query\",method=\"POST\",status=\"200\"} 2"
        ));
        assert!(text.contains("status=\"400\"} 1"));
        assert!(text.contains("shiori_query_duration_seconds_bucket{le=\"0.01\"} 0"));
        assert!(text.contains("shiori_query_duration_seconds_bucket{le=\"0.025\"} 1"));
        assert!(text.contains("shiori_query_duration_seconds_bucket{le=\"5\"} 2"));
        assert!(text.contains("shiori_query_duration_seconds_count 2"));
    }
}
