// The Shiori page: a chat over the documents (answers streamed over server-sent events, each
// turn with its sources and citations, follow-ups in one conversation), uploads, reindex with
// progress, evaluation. Transport and rendering only: answers, defaults and checks are the
// server's.
"use strict";

const $ = (id) => document.getElementById(id);
const keyInput = $("api-key");
keyInput.value = localStorage.getItem("shiori-api-key") || "";
keyInput.addEventListener("change", () => {
  localStorage.setItem("shiori-api-key", keyInput.value);
  loadStats();
  loadDocuments();
});

// Every request carries X-Shiori-Request, which another site's page cannot send without the
// server's consent, so the server can tell the page's uploads from forged ones.
function headers(extra) {
  const h = Object.assign({ "X-Shiori-Request": "1" }, extra);
  if (keyInput.value) h["Authorization"] = "Bearer " + keyInput.value;
  return h;
}

async function failure(response) {
  const data = await response.json().catch(() => ({}));
  return new Error((data.error && data.error.message) || response.statusText);
}

async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  return response.json();
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- views -------------------------------------------------------------------------------
function showView() {
  const evalView = location.hash === "#eval";
  $("view-chat").hidden = evalView;
  $("view-eval").hidden = !evalView;
  $("nav-chat").classList.toggle("active", !evalView);
  $("nav-eval").classList.toggle("active", evalView);
}
window.addEventListener("hashchange", showView);
showView();

// ---- stats: the configured pipelines and retrieval settings -----------------------------
async function loadStats() {
  try {
    const s = await api("GET", "/api/stats");
    $("stats").textContent = `${s.documents} documents · ${s.chunks} chunks · ${s.embedder} (${s.dimension}d)` +
      (s.last_reindex ? ` · last ${s.last_reindex.operation} ${s.last_reindex.ok ? "ok" : "failed"}` : "");
    if (!loadStats.configured) {
      loadStats.configured = true;
      $("pipeline").replaceChildren(...s.pipelines.map((name) =>
        el("option", { value: name }, name === s.default_pipeline ? name + " (default)" : name)));
      $("pipeline").value = s.default_pipeline;
      $("answer-model").textContent = s.answer_model ? "answers with " + s.answer_model : "no chat model: extractive answers";
      $("refusal").value = s.retrieval.refusal;
      $("mode").value = s.retrieval.mode;
      $("top-k").value = s.retrieval.top_k;
    }
  } catch (e) {
    $("stats").textContent = "stats unavailable: " + e.message;
  }
}
loadStats();

// The settings exactly as shown; the server checks them. A control still empty (the stats have
// not loaded) is left out, so the server's configuration applies.
function settings() {
  const shown = { pipeline: $("pipeline").value, refusal: $("refusal").value.trim(), mode: $("mode").value, top_k: $("top-k").value };
  const sent = {};
  for (const [key, value] of Object.entries(shown)) {
    if (value !== "") sent[key] = key === "top_k" ? Number(value) : value;
  }
  return sent;
}

// ---- writes: reindex progress and its failures -------------------------------------------
// Follows a write the page started until its request ends: the progress route may still say
// "not running" before the write begins, so only the request's end stops the polling.
async function followWrite(operation, request) {
  const bar = $("reindex-progress");
  let finished = false;
  const settled = request.catch(() => {}).then(() => { finished = true; });
  bar.hidden = false;
  bar.removeAttribute("value");
  while (!finished) {
    try {
      const p = await api("GET", "/api/reindex");
      if (p.running && p.operation === operation && !finished) {
        bar.max = Math.max(p.total, 1);
        bar.value = p.done;
        $("reindex-status").textContent = `${p.operation}: ${p.phase} ${p.done}/${p.total} · ${p.chunks_embedded} chunks embedded`;
      }
    } catch (e) { /* the write's own response reports errors */ }
    await Promise.race([settled, sleep(250)]);
  }
  bar.hidden = true;
  return request;
}

function showFailures(failures) {
  const list = $("reindex-failures");
  list.replaceChildren(...failures.map((f) => el("li", {}, el("code", {}, f.path), " — " + f.reason)));
  list.hidden = failures.length === 0;
}

$("reindex").addEventListener("click", async () => {
  const button = $("reindex");
  button.disabled = true;
  showFailures([]);
  $("reindex-status").textContent = "reindexing…";
  try {
    const r = await followWrite("reindex", api("POST", "/api/reindex"));
    const rep = r.report;
    $("reindex-status").textContent = `indexed ${rep.files_indexed}, unchanged ${rep.files_unchanged}, removed ${rep.files_removed}` +
      ` · ${rep.chunks_embedded} embedded, ${rep.chunks_cached} cached · ${Math.round(r.timings_ms.total_ms)} ms` +
      (rep.failures.length ? ` · ${rep.failures.length} failure(s):` : "");
    showFailures(rep.failures);
  } catch (e) {
    $("reindex-status").textContent = "reindex failed: " + e.message;
  } finally {
    button.disabled = false;
    loadStats();
    loadDocuments();
  }
});

// ---- documents ---------------------------------------------------------------------------
async function loadDocuments() {
  try {
    const d = await api("GET", "/api/documents");
    $("documents-summary").textContent = `${d.documents.length} uploaded · ${d.indexed_files} files indexed in all`;
    $("documents").replaceChildren(...d.documents.map((doc) => {
      const remove = el("button", { type: "button", class: "link", title: "delete " + doc.id }, "delete");
      remove.addEventListener("click", () => deleteDocument(doc.id));
      return el("li", {}, el("span", { class: "doc-name" }, doc.id),
        el("span", { class: "muted" }, ` ${(doc.size / 1024).toFixed(1)} KB${doc.indexed ? "" : " · not indexed"} `), remove);
    }));
  } catch (e) {
    $("documents-summary").textContent = "documents unavailable: " + e.message;
  }
}
loadDocuments();

async function deleteDocument(id) {
  try {
    await api("DELETE", "/api/documents/" + encodeURIComponent(id));
  } catch (e) {
    $("upload-outcomes").replaceChildren(el("li", { class: "failed" }, `${id}: ${e.message}`));
  }
  loadDocuments();
  loadStats();
}

$("upload-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = $("upload");
  button.disabled = true;
  const form = new FormData();
  for (const file of $("upload-file").files) form.append("file", file, file.name);
  try {
    const response = await fetch("/api/documents", { method: "POST", headers: headers({}), body: form });
    if (!response.ok && response.status !== 422) throw await failure(response);
    const body = await response.json();
    $("upload-outcomes").replaceChildren(...body.documents.map((d) =>
      el("li", { class: d.status }, `${d.id}: ${d.status}` + (d.reason ? ` (${d.reason})` : ""))));
    $("upload-file").value = "";
  } catch (e) {
    $("upload-outcomes").replaceChildren(el("li", { class: "failed" }, e.message));
  } finally {
    button.disabled = false;
    loadDocuments();
    loadStats();
  }
});

// ---- chat --------------------------------------------------------------------------------
let conversationId = null;
let turnCount = 0;

$("new-conversation").addEventListener("click", () => {
  conversationId = null;
  turnCount = 0;
  $("turns").replaceChildren();
  $("error").hidden = true;
  $("conversation").textContent = "New conversation";
  $("question").focus();
});

// The conversation the next question continues; the server starts one for the first question.
async function conversation() {
  if (conversationId === null) {
    conversationId = (await api("POST", "/api/conversations")).id;
    $("conversation").textContent = "Conversation " + conversationId;
  }
  return conversationId;
}

// One question and its answer on the page, filled in as the stream arrives.
function newTurn(question) {
  const id = "turn-" + turnCount++;
  const parts = {
    root: el("article", { class: "turn", id }),
    notices: el("div", { class: "notices" }),
    answer: el("p", { class: "answer streaming" }),
    sources: el("ol", { class: "sources" }),
    trace: el("ol", { class: "trace" }),
    timings: el("p", { class: "muted timings" }),
    id,
  };
  parts.root.append(
    el("p", { class: "question" }, question),
    parts.notices,
    parts.answer,
    el("details", { class: "sources-box", open: "" }, el("summary", {}, "Sources"), parts.sources),
    el("details", { class: "trace-box" }, el("summary", {}, "Trace"), parts.trace),
    parts.timings);
  // Earlier turns fold their sources away; a citation click opens them again.
  for (const box of $("turns").querySelectorAll(".sources-box")) box.open = false;
  $("turns").append(parts.root);
  parts.root.scrollIntoView({ block: "start" });
  return parts;
}

function renderAnswer(turn, text, citations, sources) {
  turn.answer.replaceChildren();
  const byNumber = new Map((citations || []).map((c) => [c.number, c]));
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    const citation = byNumber.get(Number(match[1]));
    const index = citation ? sources.findIndex((s) => s.chunk_id === citation.chunk_id) : -1;
    if (index < 0) continue;
    turn.answer.append(text.slice(last, match.index));
    const link = el("a", { class: "cite", href: `#${turn.id}-source-${index}` }, match[0]);
    link.addEventListener("click", (event) => {
      event.preventDefault();
      highlightSource(turn, index);
    });
    turn.answer.append(link);
    last = match.index + match[0].length;
  }
  turn.answer.append(text.slice(last));
}

function highlightSource(turn, index) {
  for (const li of turn.sources.children) li.classList.remove("highlight");
  const target = $(`${turn.id}-source-${index}`);
  target.closest("details").open = true;
  target.classList.add("highlight");
  target.scrollIntoView({ behavior: "smooth", block: "center" });
}

function renderSources(turn, sources, citations) {
  const quotesOf = new Map((citations || []).map((c) => [c.chunk_id, c.quotes || []]));
  turn.sources.replaceChildren(...sources.map((s, i) => el("li", { id: `${turn.id}-source-${i}` },
    el("div", { class: "source-head" },
      el("span", {}, s.title || s.doc_id),
      el("span", { class: "score" }, "score " + Number(s.score).toFixed(4))),
    el("div", { class: "muted" }, s.source === s.doc_id ? s.source : s.doc_id + " · " + s.source),
    el("p", { class: "source-text" }, ...withQuotesMarked(s.text, quotesOf.get(s.chunk_id) || [])))));
}

// A source's text with the passages an answer quotes in <mark>; quotes count characters
// (code points), as the API gives them.
function withQuotesMarked(text, quotes) {
  const chars = Array.from(text);
  const parts = [];
  let last = 0;
  for (const q of [...quotes].sort((a, b) => a.start - b.start)) {
    if (q.start < last || q.end > chars.length) continue;
    parts.push(chars.slice(last, q.start).join(""), el("mark", {}, chars.slice(q.start, q.end).join("")));
    last = q.end;
  }
  parts.push(chars.slice(last).join(""));
  return parts;
}

function addTraceStep(turn, step) {
  const detail = (step.model ? step.model + ": " : "") + step.input + " → " + step.output;
  turn.trace.append(el("li", {}, el("span", { class: "step-name" }, step.step), " — " + detail,
    el("span", { class: "muted" }, ` (${Number(step.ms).toFixed(1)} ms)`)));
}

function renderDone(turn, r) {
  turn.answer.classList.remove("streaming");
  renderAnswer(turn, r.answer, r.citations, r.sources);
  renderSources(turn, r.sources, r.citations);
  turn.trace.replaceChildren();
  r.trace.steps.forEach((step) => addTraceStep(turn, step));
  if (r.refused) {
    turn.root.classList.add("refused");
    turn.notices.append(el("p", { class: "notice refusal" }, "Refused: the documents do not answer this question."));
  }
  if (r.degraded) {
    turn.notices.append(el("p", { class: "notice degraded" }, "Degraded: " + r.degraded));
  }
  turn.root.scrollIntoView({ block: "start" });
  const t = r.timings_ms;
  const first = t.first_token_ms == null ? "" : `, first token ${t.first_token_ms.toFixed(1)}`;
  turn.timings.textContent = `${r.trace.pipeline} · total ${t.total_ms.toFixed(1)} ms (embed ${t.embed_ms.toFixed(1)}, retrieve ${t.retrieve_ms.toFixed(1)}, answer ${t.answer_ms.toFixed(1)}${first})` +
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

async function ask(question) {
  const body = Object.assign({ question, conversation_id: await conversation() }, settings());
  const response = await fetch("/api/query", {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", "Accept": "text/event-stream" }),
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  const turn = newTurn(question);
  let streamed = "";
  await readEvents(response, (name, data) => {
    if (name === "step") addTraceStep(turn, data);
    else if (name === "token") { streamed += data.text; turn.answer.textContent = streamed; }
    else if (name === "done") renderDone(turn, data);
    else if (name === "error") {
      turn.answer.classList.remove("streaming");
      throw new Error(data.error.message);
    }
  });
}

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = $("ask");
  button.disabled = true;
  $("error").hidden = true;
  try {
    await ask($("question").value);
    $("question").value = "";
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
  try {
    const { refusal, mode } = settings();
    const r = await followWrite("eval", api("POST", "/api/eval", { refusal, mode }));
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
    $("reindex-status").textContent = "";
    button.disabled = false;
    loadStats();
  }
});
