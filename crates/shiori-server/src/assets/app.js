// The Shiori page: a chat over the documents (answers streamed over server-sent events, each
// turn with its sources grouped by document and its citations, follow-ups in one conversation,
// earlier conversations to return to), a view of a source in its document, uploads, reindex
// with progress, evaluation. Transport and rendering only: answers, defaults and checks are the
// server's. Nothing received is ever parsed as HTML: answers, document text and file names
// become text nodes or elements built here.
"use strict";

const $ = (id) => document.getElementById(id);
const keyInput = $("api-key");
keyInput.value = localStorage.getItem("shiori-api-key") || "";
keyInput.addEventListener("change", () => {
  localStorage.setItem("shiori-api-key", keyInput.value);
  loadStats();
  loadDocuments();
  loadConversations();
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

// An element with attributes and children; strings become text nodes, and absent children
// (null, undefined, false) are left out.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function duration(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function remaining(seconds) {
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function when(ms) {
  const date = new Date(ms);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : date.toLocaleDateString();
}

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
// The one pipeline that calls no model: it quotes the documents' sentences.
const QUOTING_PIPELINE = "extractive";
let answerModel = null;

function usesModel(pipeline) {
  return pipeline !== QUOTING_PIPELINE;
}

function pipelineLabel(name, s) {
  const base = name === s.default_pipeline ? name + " (default)" : name;
  if (!usesModel(name)) return base + " — quotes the documents, no model";
  return base + (s.answer_model ? " — writes with " + s.answer_model : " — needs a chat model");
}

function describePipeline() {
  const pipeline = $("pipeline").value;
  $("answer-model").textContent = !answerModel ? "no chat model: extractive answers"
    : usesModel(pipeline) ? "answers with " + answerModel : "quotes the documents: no model";
}
$("pipeline").addEventListener("change", describePipeline);

async function loadStats() {
  try {
    const s = await api("GET", "/api/stats");
    $("stats").textContent = `${s.documents} documents · ${s.chunks} chunks · ${s.embedder} (${s.dimension}d)` +
      (s.last_reindex ? ` · last ${s.last_reindex.operation} ${s.last_reindex.ok ? "ok" : "failed"}` : "");
    if (!loadStats.configured) {
      loadStats.configured = true;
      answerModel = s.answer_model;
      $("pipeline").replaceChildren(...s.pipelines.map((name) => el("option", { value: name }, pipelineLabel(name, s))));
      $("pipeline").value = s.default_pipeline;
      describePipeline();
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
        $("reindex-status").textContent = `${p.operation}: ${p.phase} ${p.done}/${p.total} · ${p.chunks_embedded} chunks embedded` +
          (p.chunks_embedded > 0 ? ` (${p.chunks_per_second.toFixed(1)}/s)` : "") + (p.eta_s == null ? "" : ` · ETA ${remaining(p.eta_s)}`);
      }
    } catch (e) { /* the write's own response reports errors */ }
    await Promise.race([settled, sleep(250)]);
  }
  bar.hidden = true;
  return request;
}

// The files a write could not index, and those it indexed with a warning (a blank file).
function showFailures(failures, warnings) {
  const list = $("reindex-failures");
  list.replaceChildren(...failures.map((f) => el("li", {}, el("code", {}, f.path), " — " + f.reason)),
    ...warnings.map((w) => el("li", { class: "warning" }, el("code", {}, w.path), " — warning: " + w.reason)));
  list.hidden = failures.length + warnings.length === 0;
}

$("reindex").addEventListener("click", async () => {
  const button = $("reindex");
  button.disabled = true;
  showFailures([], []);
  $("reindex-status").textContent = "reindexing…";
  try {
    const r = await followWrite("reindex", api("POST", "/api/reindex"));
    const rep = r.report;
    $("reindex-status").textContent = `indexed ${rep.files_indexed}, unchanged ${rep.files_unchanged}, removed ${rep.files_removed}` +
      ` · ${rep.chunks_embedded} embedded, ${rep.chunks_cached} cached · ${duration(r.timings_ms.total_ms)}` +
      (rep.failures.length ? ` · ${rep.failures.length} failure(s)` : "") +
      (rep.warnings.length ? ` · ${rep.warnings.length} warning(s)` : "") +
      (rep.failures.length + rep.warnings.length ? ":" : "");
    showFailures(rep.failures, rep.warnings);
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

// ---- Markdown ----------------------------------------------------------------------------
// Models write Markdown. An answer also carries words of the documents and of whoever asked,
// so it is rendered into elements built here (paragraphs, lists, emphasis, code, quotes) and
// text nodes, never parsed as HTML; a link becomes one only when it is http(s).

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const FENCE = /^\s*(```|~~~)/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)[\s#]*$/;
const QUOTE = /^\s*>\s?(.*)$/;

// The answer checker joins the sentences it keeps with a space (a line break ends a sentence),
// so a list the model wrote an item a line arrives as "…: - one [1]. - two [1]."; a list marker
// right after a sentence's end starts its line again.
function restoreListLines(text) {
  return text.replace(/([.!?。:：\]])[ \t]+(?=(?:[-*+]|\d{1,3}[.)])[ \t]+\S)/g, "$1\n");
}

// `cite(n)` makes the node for a `[n]` marker, or null to leave it as text.
function markdown(text, cite) {
  const normal = text.replace(/\r\n?/g, "\n");
  const lines = (normal.includes("\n") ? normal : restoreListLines(normal)).split("\n");
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    const [block, next] = FENCE.test(line) ? codeBlock(lines, i)
      : HEADING.test(line) ? [el("p", { class: "md-heading" }, el("strong", {}, ...inline(HEADING.exec(line)[1], cite))), i + 1]
      : LIST_ITEM.test(line) ? listBlock(lines, i, cite)
      : QUOTE.test(line) ? quoteBlock(lines, i, cite)
      : paragraph(lines, i, cite);
    blocks.push(block);
    i = next;
  }
  return blocks;
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || LIST_ITEM.test(line) || QUOTE.test(line);
}

function codeBlock(lines, start) {
  const fence = FENCE.exec(lines[start])[1];
  const code = [];
  let i = start + 1;
  while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
  return [el("pre", {}, el("code", {}, code.join("\n"))), i + 1];
}

function paragraph(lines, start, cite) {
  const node = el("p");
  let i = start;
  while (i < lines.length && lines[i].trim() && (i === start || !startsBlock(lines[i]))) {
    if (i > start) node.append(el("br"));
    node.append(...inline(lines[i].trim(), cite));
    i++;
  }
  return [node, i];
}

function quoteBlock(lines, start, cite) {
  const quoted = [];
  let i = start;
  while (i < lines.length && QUOTE.test(lines[i])) quoted.push(QUOTE.exec(lines[i++])[1]);
  return [el("blockquote", {}, ...markdown(quoted.join("\n"), cite)), i];
}

const ordered = (marker) => /\d/.test(marker);

// Consecutive items of one kind, blank lines between them allowed; a line that starts no block
// continues the item above it. Nested items are listed at one level.
function listBlock(lines, start, cite) {
  const first = LIST_ITEM.exec(lines[start]);
  const numbered = ordered(first[2]);
  const list = el(numbered ? "ol" : "ul");
  if (numbered && parseInt(first[2], 10) !== 1) list.setAttribute("start", String(parseInt(first[2], 10)));
  let item = null;
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const match = LIST_ITEM.exec(line);
    if (match && ordered(match[2]) === numbered) {
      item = el("li", {}, ...inline(match[3], cite));
      list.append(item);
    } else if (!line.trim()) {
      const following = lines.slice(i + 1).find((l) => l.trim());
      const more = following !== undefined && LIST_ITEM.test(following) && ordered(LIST_ITEM.exec(following)[2]) === numbered;
      if (!more) break;
    } else if (startsBlock(line)) {
      break;
    } else {
      item.append(el("br"), ...inline(line.trim(), cite));
    }
    i++;
  }
  return [list, i];
}

// Inline spans, each the earliest match of these rules (the first rule wins a tie).
const INLINE_RULES = [
  [/`([^`\n]+)`/, (m) => el("code", {}, m[1])],
  [/\*\*(\S(?:[\s\S]*?\S)?)\*\*/, (m, cite) => el("strong", {}, ...inline(m[1], cite))],
  [/__(\S(?:[\s\S]*?\S)?)__/, (m, cite) => el("strong", {}, ...inline(m[1], cite))],
  [/\*([^\s*](?:[^*]*?[^\s*])?)\*/, (m, cite) => el("em", {}, ...inline(m[1], cite))],
  [/(?<![\p{L}\p{N}_])_([^\s_](?:[^_]*?[^\s_])?)_(?![\p{L}\p{N}_])/u, (m, cite) => el("em", {}, ...inline(m[1], cite))],
  [/\[([^\]\n]+)\]\(\s*([^()\s]+)\s*\)/, (m) => link(m[1], m[2])],
  [/\[(\d{1,3})\]/, (m, cite) => cite(Number(m[1])) || m[0]],
  [/\bhttps?:\/\/[^\s<>"'`]*[^\s<>"'`.,;:!?)\]]/, (m) => link(m[0], m[0])],
];

function inline(text, cite) {
  const nodes = [];
  let rest = text;
  while (rest) {
    let best = null;
    for (const [pattern, build] of INLINE_RULES) {
      const match = pattern.exec(rest);
      if (match && (best === null || match.index < best.match.index)) best = { match, build };
    }
    if (best === null) {
      nodes.push(rest);
      break;
    }
    if (best.match.index > 0) nodes.push(rest.slice(0, best.match.index));
    nodes.push(best.build(best.match, cite));
    rest = rest.slice(best.match.index + best.match[0].length);
  }
  return nodes;
}

// A link to an http(s) address opens in a new tab; any other address (javascript:, data:, a
// relative path) is shown as text beside its label.
function link(label, address) {
  let url = null;
  try {
    url = new URL(address);
  } catch (e) { /* not an absolute address */ }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return label === address ? label : `${label} (${address})`;
  }
  return el("a", { href: url.href, target: "_blank", rel: "noopener noreferrer nofollow" }, label);
}

// ---- sources: grouped by document, each passage under its section ----------------------
// A chunk's title is its document's title and the headings above it, joined by this.
const SECTION_SEPARATOR = " › ";

function documentTitle(s) {
  return (s.title || "").split(SECTION_SEPARATOR)[0] || fileOf(s);
}

function sectionOf(s) {
  return (s.title || "").split(SECTION_SEPARATOR).slice(1).join(SECTION_SEPARATOR);
}

// A PDF's pages are documents of their own (`report.pdf#p3`, shown as `report.pdf p.3`); they
// are grouped, and opened, as the one file.
function pageOf(s) {
  const match = / p\.(\d+)$/.exec(s.source || "");
  return match ? Number(match[1]) : null;
}

function fileOf(s) {
  return (s.source || s.doc_id).replace(/ p\.\d+$/, "");
}

function documentKey(s) {
  return pageOf(s) === null ? s.doc_id : fileOf(s);
}

// Where in its document a passage is: its section and page, or, among several passages of a
// document without headings, its place.
function passageLabel(s, alone) {
  const page = pageOf(s);
  const parts = [sectionOf(s), page === null ? "" : "page " + page].filter(Boolean);
  if (parts.length || alone) return parts.join(" · ");
  const index = /#(\d+)$/.exec(s.chunk_id || "");
  return index ? "passage " + (Number(index[1]) + 1) : "";
}

// The sources in groups of one document each, in the order of each document's best source.
function groupByDocument(sources) {
  const groups = new Map();
  sources.forEach((source, index) => {
    const key = documentKey(source);
    if (!groups.has(key)) groups.set(key, { title: documentTitle(source), path: fileOf(source), items: [] });
    groups.get(key).items.push({ source, index });
  });
  return [...groups.values()];
}

function renderSources(turn, sources, citations, refused) {
  const quotesOf = new Map((citations || []).map((c) => [c.chunk_id, c.quotes || []]));
  const groups = groupByDocument(sources);
  turn.sources.replaceChildren(...groups.map((group) => el("section", { class: "source-doc" },
    el("div", { class: "source-doc-head" },
      el("span", { class: "doc-title" }, group.title),
      group.path === group.title ? null : el("span", { class: "muted doc-path" }, group.path)),
    el("ol", { class: "doc-sources" }, ...group.items.map(({ source, index }) =>
      sourceItem(turn, source, index, quotesOf.get(source.chunk_id) || [], group.items.length === 1))))));
  const passages = `${sources.length} passage${sources.length === 1 ? "" : "s"}`;
  const documents = `${groups.length} document${groups.length === 1 ? "" : "s"}`;
  // A refusal's sources are what came closest, and none answers: they stay folded.
  turn.sourcesSummary.textContent = refused ? `Closest passages, none of which answers (${passages})` : `Sources · ${passages} from ${documents}`;
  turn.sourcesBox.hidden = sources.length === 0;
  turn.sourcesBox.open = !refused && sources.length > 0;
}

function sourceItem(turn, source, index, quotes, alone) {
  const open = el("button", { type: "button", class: "open-doc" }, "Open in document");
  open.addEventListener("click", () => openDocument(source));
  return el("li", { id: `${turn.id}-source-${index}`, class: "source" },
    el("div", { class: "source-head" },
      el("span", { class: "source-number" }, `[${index + 1}]`),
      el("span", { class: "section" }, passageLabel(source, alone)),
      open),
    source.text === undefined ? null : el("p", { class: "source-text" }, ...withQuotesMarked(source.text, quotes)));
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

function highlightSource(turn, index) {
  for (const li of turn.sources.querySelectorAll("li.source")) li.classList.remove("highlight");
  const target = $(`${turn.id}-source-${index}`);
  if (!target) return;
  target.closest("details").open = true;
  target.classList.add("highlight");
  target.scrollIntoView({ behavior: "smooth", block: "center" });
}

// ---- the document view: a source in its whole document -----------------------------------
$("document-close").addEventListener("click", () => $("document-view").close());

async function openDocument(source) {
  const dialog = $("document-view");
  const page = pageOf(source);
  $("document-title").textContent = documentTitle(source);
  $("document-path").textContent = fileOf(source) + (page === null ? "" : ` · page ${page}`);
  $("document-body").replaceChildren(el("p", { class: "muted" }, "loading…"));
  if (!dialog.open) dialog.showModal();
  try {
    const id = page === null ? source.doc_id : fileOf(source);
    const doc = await api("GET", "/api/document?id=" + encodeURIComponent(id));
    renderDocument(doc.chunks, source.chunk_id);
  } catch (e) {
    $("document-body").replaceChildren(el("p", { class: "error" }, "The document could not be opened: " + e.message));
  }
}

// The chunks in order, each section's heading and each page's number once, the source's own
// chunk marked and scrolled to.
function renderDocument(chunks, current) {
  let lastSection = null;
  let lastPage = null;
  const blocks = chunks.map((chunk) => {
    const block = el("section", { class: "doc-chunk" + (chunk.chunk_id === current ? " current" : "") });
    const page = pageOf(chunk);
    const section = sectionOf(chunk);
    if (page !== null && page !== lastPage) block.append(el("p", { class: "doc-page" }, "Page " + page));
    if (section && section !== lastSection) block.append(el("h3", {}, section));
    for (const text of chunk.text.split(/\n\s*\n/)) block.append(el("p", {}, text));
    lastPage = page;
    lastSection = section;
    return block;
  });
  $("document-body").replaceChildren(...blocks);
  const marked = $("document-body").querySelector(".doc-chunk.current");
  if (marked) marked.scrollIntoView({ block: "center" });
}

// ---- conversations -----------------------------------------------------------------------
let conversationId = null;
let turnCount = 0;
// The question in flight: its AbortController, which the stop button aborts.
let running = null;

async function loadConversations() {
  try {
    const { conversations } = await api("GET", "/api/conversations");
    const asked = conversations.filter((c) => c.turns > 0);
    $("conversations").replaceChildren(...asked.map(conversationItem));
    $("conversations-summary").textContent = asked.length ? "" : "No conversations yet.";
  } catch (e) {
    $("conversations-summary").textContent = "conversations unavailable: " + e.message;
  }
}
loadConversations();

function conversationItem(c) {
  const button = el("button", { type: "button", class: "conversation-link" + (c.id === conversationId ? " active" : ""), title: c.title },
    el("span", { class: "conversation-name" }, c.title),
    el("span", { class: "muted" }, `${c.turns} turn${c.turns === 1 ? "" : "s"} · ${when(c.updated_ms)}`));
  button.addEventListener("click", () => openConversation(c.id));
  return el("li", {}, button);
}

function resetConversation(id, title) {
  conversationId = id;
  turnCount = 0;
  $("turns").replaceChildren();
  $("error").hidden = true;
  $("conversation").textContent = title || "New conversation";
}

$("new-conversation").addEventListener("click", () => {
  if (running) return;
  resetConversation(null, null);
  loadConversations();
  $("question").focus();
});

// Shows a stored conversation's turns; the next question continues it.
async function openConversation(id) {
  if (running) return;
  try {
    const c = await api("GET", "/api/conversations/" + encodeURIComponent(id));
    resetConversation(c.id, c.turns.length ? c.turns[0].question : null);
    c.turns.forEach(showStoredTurn);
    loadConversations();
    window.scrollTo(0, 0);
  } catch (e) {
    $("error").textContent = e.message;
    $("error").hidden = false;
  }
}

// The conversation the next question continues; the server starts one for the first question.
async function conversation(question) {
  if (conversationId === null) {
    conversationId = (await api("POST", "/api/conversations")).id;
    $("conversation").textContent = question;
  }
  return conversationId;
}

// ---- turns -------------------------------------------------------------------------------
// One question and its answer on the page, filled in as the stream arrives.
function newTurn(question) {
  const id = "turn-" + turnCount++;
  const turn = {
    root: el("article", { class: "turn", id }),
    status: el("p", { class: "turn-status", role: "status", hidden: "" }),
    notices: el("div", { class: "notices" }),
    answer: el("div", { class: "answer" }),
    sources: el("div", { class: "sources" }),
    sourcesSummary: el("summary", {}, "Sources"),
    trace: el("ol", { class: "trace" }),
    timings: el("p", { class: "muted timings" }),
    id,
  };
  turn.sourcesBox = el("details", { class: "sources-box", hidden: "" }, turn.sourcesSummary, turn.sources);
  turn.traceBox = el("details", { class: "trace-box", hidden: "" }, el("summary", {}, "Trace"), turn.trace);
  turn.root.append(el("p", { class: "question" }, question), turn.status, turn.notices, turn.answer,
    turn.sourcesBox, turn.traceBox, turn.timings);
  // Earlier turns fold their sources away; a citation click opens them again.
  for (const box of $("turns").querySelectorAll(".sources-box")) box.open = false;
  $("turns").append(turn.root);
  return turn;
}

// `[n]` markers as links to their sources: through the answer's citations when it has them,
// else (a stored turn) to the nth source.
function citationLinks(turn, citations, sources) {
  const byNumber = new Map((citations || []).map((c) => [c.number, c]));
  return (number) => {
    const citation = byNumber.get(number);
    const index = citations ? (citation ? sources.findIndex((s) => s.chunk_id === citation.chunk_id) : -1) : number - 1;
    if (index < 0 || index >= sources.length) return null;
    const link = el("a", { class: "cite", href: `#${turn.id}-source-${index}` }, `[${number}]`);
    link.addEventListener("click", (event) => {
      event.preventDefault();
      highlightSource(turn, index);
    });
    return link;
  };
}

function showNotice(turn, kind, text) {
  turn.notices.append(el("p", { class: "notice " + kind }, text));
}

function showStoredTurn(stored) {
  const turn = newTurn(stored.question);
  turn.answer.replaceChildren(...markdown(stored.answer, citationLinks(turn, null, stored.sources)));
  renderSources(turn, stored.sources, [], stored.refused);
  if (stored.refused) markRefused(turn);
  turn.timings.textContent = "asked " + when(stored.at_ms);
}

function markRefused(turn) {
  turn.root.classList.add("refused");
  showNotice(turn, "refusal", "Refused: the documents do not answer this question.");
}

function addTraceStep(turn, step) {
  const detail = (step.model ? step.model + ": " : "") + step.input + " → " + step.output;
  turn.trace.append(el("li", {}, el("span", { class: "step-name" }, step.step), " — " + detail,
    el("span", { class: "muted" }, ` (${duration(step.ms)})`)));
  turn.traceBox.hidden = false;
}

// What the answer cost, told only where something was spent: an answer no model wrote used no
// tokens and cost nothing, and says neither.
function timingsText(r) {
  const t = r.timings_ms;
  const parts = [r.trace.pipeline, "answered in " + duration(t.total_ms)];
  const modelSteps = r.trace.steps.some((step) => step.model);
  if (modelSteps && t.first_token_ms != null) parts.push("first sentence after " + duration(t.first_token_ms));
  const tokens = r.usage.prompt_tokens + r.usage.completion_tokens;
  if (tokens > 0) parts.push(`${tokens} tokens`);
  if (r.cost_usd > 0) parts.push("$" + r.cost_usd.toFixed(4));
  return parts.join(" · ");
}

function renderDone(turn, r) {
  turn.answer.classList.remove("streaming");
  turn.answer.replaceChildren(...markdown(r.answer, citationLinks(turn, r.citations, r.sources)));
  renderSources(turn, r.sources, r.citations, r.refused);
  turn.trace.replaceChildren();
  r.trace.steps.forEach((step) => addTraceStep(turn, step));
  const t = r.timings_ms;
  turn.trace.append(el("li", { class: "muted" },
    `embed ${duration(t.embed_ms)}, retrieve ${duration(t.retrieve_ms)}, answer ${duration(t.answer_ms)}`));
  if (r.refused) markRefused(turn);
  if (r.degraded) showNotice(turn, "degraded", "Degraded: " + r.degraded);
  turn.timings.textContent = timingsText(r);
}

// ---- the turn's state while it is answered -----------------------------------------------
// A model's answer reaches the page a checked sentence at a time, so a long first sentence is
// a long wait: the state says what is happening and for how long.
const PHASES = {
  searching: () => "Searching the documents…",
  writing: () => `Answering with ${answerModel}: each sentence appears once it is checked against the sources`,
  quoting: () => "Quoting the documents…",
  checking: () => "Checking the citations…",
};

function startStatus(turn, pipeline) {
  const started = Date.now();
  turn.modelWrites = usesModel(pipeline) && answerModel !== null;
  turn.showStatus = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    turn.status.textContent = PHASES[turn.phase]() + (seconds > 0 ? ` · ${seconds} s` : "");
  };
  turn.status.hidden = false;
  setPhase(turn, "searching");
  turn.timer = setInterval(turn.showStatus, 1000);
}

function setPhase(turn, phase) {
  turn.phase = phase;
  turn.status.dataset.phase = phase;
  turn.showStatus();
}

function endStatus(turn) {
  clearInterval(turn.timer);
  turn.status.hidden = true;
}

// Steps are reported as they end: the answer step and the citation check end the generation.
function onStep(turn, step) {
  addTraceStep(turn, step);
  if (step.step === "answer" || step.step === "check_citations") setPhase(turn, "checking");
  else if (turn.phase === "searching") setPhase(turn, turn.modelWrites ? "writing" : "quoting");
}

function onToken(turn, text) {
  turn.streamed += text;
  turn.answer.classList.add("streaming");
  turn.answer.replaceChildren(...markdown(turn.streamed, () => null));
  if (turn.phase === "searching") setPhase(turn, turn.modelWrites ? "writing" : "quoting");
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

async function streamAnswer(turn, question, signal) {
  const body = Object.assign({ question, conversation_id: await conversation(question) }, settings());
  const response = await fetch("/api/query", {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", "Accept": "text/event-stream" }),
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await failure(response);
  let answered = false;
  await readEvents(response, (name, data) => {
    if (name === "step") onStep(turn, data);
    else if (name === "token") onToken(turn, data.text);
    else if (name === "done") { answered = true; renderDone(turn, data); }
    else if (name === "error") throw new Error(data.error.message);
  });
  if (!answered) throw new Error("the answer ended before it was complete");
}

// Asks one question as the next turn; true when it was answered.
async function ask(question) {
  const turn = newTurn(question);
  turn.streamed = "";
  turn.root.scrollIntoView({ block: "start" });
  startStatus(turn, settings().pipeline);
  running = new AbortController();
  try {
    await streamAnswer(turn, question, running.signal);
    return true;
  } catch (e) {
    turn.answer.classList.remove("streaming");
    if (e.name === "AbortError") {
      turn.root.classList.add("stopped");
      showNotice(turn, "stopped", "Stopped: the answer was cancelled and is not kept in the conversation.");
    } else {
      showNotice(turn, "failed", "Failed: " + e.message);
    }
    return false;
  } finally {
    running = null;
    endStatus(turn);
    loadConversations();
  }
}

function setAsking(asking) {
  $("ask").hidden = asking;
  $("stop").hidden = !asking;
  $("question").disabled = asking;
  $("new-conversation").disabled = asking;
}

$("stop").addEventListener("click", () => {
  if (running) running.abort();
});

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (running) return;
  $("error").hidden = true;
  setAsking(true);
  try {
    if (await ask($("question").value)) $("question").value = "";
  } finally {
    setAsking(false);
    $("question").focus();
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
