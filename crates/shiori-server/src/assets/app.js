// The Shiori page: ask (streamed over server-sent events), reindex with progress, evaluate.
"use strict";

const $ = (id) => document.getElementById(id);
const keyInput = $("api-key");
keyInput.value = localStorage.getItem("shiori-api-key") || "";
keyInput.addEventListener("change", () => {
  localStorage.setItem("shiori-api-key", keyInput.value);
  loadStats();
});

// Every request carries X-Shiori-Request, which another site's page cannot send without the
// server's consent, so the server can tell the page's uploads from forged ones.
function headers(extra) {
  const h = Object.assign({ "X-Shiori-Request": "1" }, extra);
  if (keyInput.value) h["Authorization"] = "Bearer " + keyInput.value;
  return h;
}

async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((data.error && data.error.message) || response.statusText);
  return data;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

// ---- views -------------------------------------------------------------------------------
function showView() {
  const evalView = location.hash === "#eval";
  $("view-ask").hidden = evalView;
  $("view-eval").hidden = !evalView;
  $("nav-ask").classList.toggle("active", !evalView);
  $("nav-eval").classList.toggle("active", evalView);
}
window.addEventListener("hashchange", showView);
showView();

// ---- stats and reindex -------------------------------------------------------------------
async function loadStats() {
  try {
    const s = await api("GET", "/api/stats");
    $("stats").textContent = `${s.documents} documents · ${s.chunks} chunks · ${s.embedder} (${s.dimension}d)` +
      (s.last_reindex ? ` · last ${s.last_reindex.operation} ${s.last_reindex.ok ? "ok" : "failed"}` : "");
    if (!loadStats.configured) {
      loadStats.configured = true;
      $("refusal").value = s.retrieval.refusal;
      $("mode").value = s.retrieval.mode;
      $("top-k").value = s.retrieval.top_k;
    }
  } catch (e) {
    $("stats").textContent = "stats unavailable: " + e.message;
  }
}
loadStats();

// The refusal the page sends is exactly the text it shows; the server checks it.
function refusal() {
  return $("refusal").value.trim();
}

async function pollProgress() {
  const bar = $("reindex-progress");
  try {
    const p = await api("GET", "/api/reindex");
    if (!p.running) return;
    bar.hidden = false;
    bar.max = Math.max(p.total, 1);
    bar.value = p.done;
    $("reindex-status").textContent = `${p.operation}: ${p.phase} ${p.done}/${p.total}`;
  } catch (e) { /* the final response reports errors */ }
  pollProgress.timer = setTimeout(pollProgress, 300);
}

$("reindex").addEventListener("click", async () => {
  const button = $("reindex");
  button.disabled = true;
  $("reindex-status").textContent = "reindexing…";
  pollProgress();
  try {
    const r = await api("POST", "/api/reindex");
    const rep = r.report;
    $("reindex-status").textContent = `indexed ${rep.files_indexed}, unchanged ${rep.files_unchanged}, removed ${rep.files_removed}` +
      ` · ${rep.chunks_embedded} embedded, ${rep.chunks_cached} cached · ${Math.round(r.timings_ms.total_ms)} ms` +
      (rep.failures.length ? ` · ${rep.failures.length} failure(s)` : "");
  } catch (e) {
    $("reindex-status").textContent = "reindex failed: " + e.message;
  } finally {
    clearTimeout(pollProgress.timer);
    $("reindex-progress").hidden = true;
    button.disabled = false;
    loadStats();
  }
});

// ---- ask ---------------------------------------------------------------------------------
function renderAnswer(text, citations) {
  const answer = $("answer");
  answer.replaceChildren();
  const markers = new Map((citations || []).map((c) => [c.number, c]));
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    const citation = markers.get(Number(match[1]));
    if (!citation) continue;
    answer.append(text.slice(last, match.index));
    const index = citation.number - 1;
    const link = el("a", { class: "cite", href: "#source-" + index, "data-source": index }, match[0]);
    link.addEventListener("click", (event) => {
      event.preventDefault();
      highlightSource(index);
    });
    answer.append(link);
    last = match.index + match[0].length;
  }
  answer.append(text.slice(last));
}

function highlightSource(index) {
  for (const li of $("sources").children) li.classList.remove("highlight");
  const target = $("source-" + index);
  if (target) {
    target.classList.add("highlight");
    target.scrollIntoView({ behavior: "smooth", block: "center" });
  }
}

function renderSources(sources) {
  $("sources").replaceChildren(...sources.map((s, i) => el("li", { id: "source-" + i },
    el("div", { class: "source-head" },
      el("span", {}, s.title || s.doc_id),
      el("span", { class: "score" }, "score " + Number(s.score).toFixed(4))),
    el("div", { class: "muted" }, s.doc_id + " · " + s.source),
    el("p", { class: "source-text" }, s.text.length > 400 ? s.text.slice(0, 400) + "…" : s.text))));
}

function addTraceStep(step) {
  const detail = (step.model ? step.model + ": " : "") + step.input + " → " + step.output;
  $("trace").append(el("li", {}, el("span", { class: "step-name" }, step.step), " — " + detail,
    el("span", { class: "muted" }, ` (${Number(step.ms).toFixed(1)} ms)`)));
}

function renderResponse(r) {
  renderAnswer(r.answer, r.citations);
  $("refused").hidden = !r.refused;
  renderSources(r.sources);
  $("trace").replaceChildren();
  r.trace.steps.forEach(addTraceStep);
  $("degraded").hidden = !r.degraded;
  $("degraded").textContent = r.degraded ? "Degraded: " + r.degraded : "";
  const t = r.timings_ms;
  const first = t.first_token_ms == null ? "" : `, first token ${t.first_token_ms.toFixed(1)}`;
  $("timings").textContent = `${r.trace.pipeline} · total ${t.total_ms.toFixed(1)} ms (embed ${t.embed_ms.toFixed(1)}, retrieve ${t.retrieve_ms.toFixed(1)}, answer ${t.answer_ms.toFixed(1)}${first})` +
    ` · ${r.usage.prompt_tokens + r.usage.completion_tokens} tokens · $${r.cost_usd.toFixed(4)}`;
}

// Reads a text/event-stream response, calling onEvent(name, data) per event.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = $("ask");
  button.disabled = true;
  $("error").hidden = true;
  const body = {
    question: $("question").value,
    refusal: refusal(),
    mode: $("mode").value,
    top_k: Number($("top-k").value),
  };
  try {
    const response = await fetch("/api/query", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", "Accept": "text/event-stream" }),
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error((data.error && data.error.message) || response.statusText);
    }
    $("result").hidden = false;
    $("answer").textContent = "";
    $("sources").replaceChildren();
    $("trace").replaceChildren();
    $("refused").hidden = true;
    let streamed = "";
    await readEvents(response, (name, data) => {
      if (name === "step") addTraceStep(data);
      else if (name === "token") { streamed += data.text; $("answer").textContent = streamed; }
      else if (name === "done") renderResponse(data);
      else if (name === "error") throw new Error(data.error.message);
    });
  } catch (e) {
    $("error").textContent = e.message;
    $("error").hidden = false;
  } finally {
    button.disabled = false;
  }
});

// ---- evaluate ----------------------------------------------------------------------------
const METRICS = [
  ["ndcg@10", "nDCG@10"], ["recall@10", "Recall@10"], ["mrr@10", "MRR@10"], ["hit@1", "Hit@1"],
  ["answer_rate", "Answer rate"], ["no_answer_accuracy", "No-answer accuracy"], ["answer_in_top1", "Answer in top 1"],
  ["latency_p50_ms", "Latency p50 (ms)"],
];

function renderSweep(rows, current) {
  const w = 640, h = 280, pad = 40, top = 50;
  const x = (t) => pad + t * (w - 2 * pad);
  const y = (v) => h - pad - v * (h - pad - top);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("width", w);
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    svg.append(n);
  };
  add("line", { x1: pad, y1: y(0), x2: w - pad, y2: y(0), stroke: "#9ca3af" });
  add("line", { x1: pad, y1: y(0), x2: pad, y2: y(1), stroke: "#9ca3af" });
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    add("text", { x: x(t), y: h - pad + 16, "text-anchor": "middle", "font-size": 11, fill: "#6b7280" }, t.toFixed(2));
    add("text", { x: pad - 6, y: y(t) + 4, "text-anchor": "end", "font-size": 11, fill: "#6b7280" }, t.toFixed(2));
  }
  const line = (key, color, label, row) => {
    add("polyline", { points: rows.map((r) => `${x(r.threshold)},${y(r[key])}`).join(" "), fill: "none", stroke: color, "stroke-width": 2 });
    add("rect", { x: pad + row * 170, y: 14, width: 14, height: 4, fill: color });
    add("text", { x: pad + row * 170 + 20, y: 20, "font-size": 12, fill: color }, label);
  };
  line("answer_rate", "#2f5bd3", "answer rate", 0);
  line("no_answer_accuracy", "#b45309", "no-answer accuracy", 1);
  if (current !== null) {
    add("line", { x1: x(current), y1: y(0), x2: x(current), y2: y(1), stroke: "#111827", "stroke-dasharray": "4 3" });
    add("text", { x: x(current) + 4, y: y(1) + 12, "font-size": 11 }, "cosine cut " + current.toFixed(3));
  }
  add("text", { x: w / 2, y: h - 6, "text-anchor": "middle", "font-size": 11, fill: "#6b7280" }, "refusal threshold (best dense cosine)");
  $("sweep-chart").replaceChildren(svg);
}

$("run-eval").addEventListener("click", async () => {
  const button = $("run-eval");
  button.disabled = true;
  $("eval-error").hidden = true;
  $("eval-status").textContent = "evaluating…";
  pollProgress();
  try {
    const r = await api("POST", "/api/eval", { refusal: refusal(), mode: $("mode").value });
    const report = r.report;
    $("metric-cards").replaceChildren(...METRICS.filter(([k]) => report[k] !== undefined).map(([k, label]) =>
      el("div", {}, el("div", { class: "value" }, Number(report[k]).toFixed(k.startsWith("latency") ? 1 : 3)), el("div", { class: "label" }, label))));
    renderSweep(r.threshold_sweep, r.refusal.startsWith("cosine:") ? Number(r.refusal.slice(7)) : null);
    $("failure-count").textContent = `(${r.failures.length} of ${report.queries})`;
    $("failures").tBodies[0].replaceChildren(...r.failures.map((f) => el("tr", {},
      el("td", {}, f.question),
      el("td", {}, f.reason),
      el("td", {}, f.gold.answerable ? f.gold.doc_ids.join(", ") + (f.gold.answers.length ? " — " + f.gold.answers.join(" / ") : "") : "(unanswerable)"),
      el("td", {}, f.got.refused ? "refused" : f.got.doc_ids.join(", ") + (f.got.best_dense != null ? ` (cos ${f.got.best_dense.toFixed(3)})` : "")))));
    $("eval-result").hidden = false;
    $("eval-status").textContent = `${report.dataset}: ${report.queries} queries, mode ${r.mode}, refusal ${r.refusal}`;
  } catch (e) {
    $("eval-error").textContent = e.message;
    $("eval-error").hidden = false;
    $("eval-status").textContent = "";
  } finally {
    clearTimeout(pollProgress.timer);
    $("reindex-progress").hidden = true;
    $("reindex-status").textContent = "";
    button.disabled = false;
    loadStats();
  }
});
