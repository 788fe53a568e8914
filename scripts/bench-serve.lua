-- wrk script for scripts/bench-serve.sh: extractive /api/query POSTs over a few questions, and a
-- closing summary with p50/p95/p99 latency, requests/s and every kind of error.
local questions = {
    "How many API requests per minute does the Business plan allow?",
    "有給休暇は何日もらえますか？",
    "How do I reset my password?",
    "What is the capital of Peru?",
}
local bodies = {}
for i, question in ipairs(questions) do
    bodies[i] = '{"question": "' .. question .. '", "pipeline": "extractive"}'
end
local sent = 0

request = function()
    sent = sent + 1
    return wrk.format("POST", "/api/query", { ["Content-Type"] = "application/json" },
        bodies[(sent % #bodies) + 1])
end

done = function(summary, latency, requests)
    local seconds = summary.duration / 1e6
    local e = summary.errors
    io.write(string.format("requests: %d in %.1f s = %.1f req/s\n",
        summary.requests, seconds, summary.requests / seconds))
    io.write(string.format("latency: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms\n",
        latency:percentile(50) / 1000, latency:percentile(95) / 1000,
        latency:percentile(99) / 1000, latency.max / 1000))
    io.write(string.format("errors: %d (connect %d, read %d, write %d, timeout %d, non-2xx %d)\n",
        e.connect + e.read + e.write + e.timeout + e.status,
        e.connect, e.read, e.write, e.timeout, e.status))
end
