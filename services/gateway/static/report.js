// A completed job: the report with clickable citations, the cited passages of a source
// highlighted inside its archived canonical text with the source's scores, what the
// checks did (sentences and claims by check level, removals by reason, the judge), the
// Verified Findings with their levels and every claim's status and level.

import { api, apiFile } from "./api.js";
import { $, el, percent, show } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const SCORES = [
  ["composite_score", "Composite", percent],
  ["relevance_score", "Relevance", percent],
  ["credibility_score", "Credibility", percent],
  ["authority_score", "Authority", percent],
  ["recency_score", "Recency", percent],
  ["credibility_tier", "Tier", String],
  ["domain_authority", "Domain authority", String],
  ["retrieval_method", "Found by", String],
  ["published_at", "Published", (v) => (v ? new Date(v).toLocaleDateString() : "unknown")],
];

let shown = null; // {jobId, result, sources (rows by url), ctx}

export function clearResult() {
  shown = null;
  show($("#result-view"), false);
  show($("#source-panel"), false);
  $("#report").replaceChildren();
  $("#findings").replaceChildren();
  $("#claims-table tbody").replaceChildren();
  show($("#verification"), false);
}

export async function showResult(jobId, ctx) {
  const [result, sources, claims] = await Promise.all([
    api(`/api/research/jobs/${jobId}/result`),
    api(`/api/research/jobs/${jobId}/sources`),
    api(`/api/research/jobs/${jobId}/claims`),
  ]);
  const byUrl = new Map(sources.sources.map((s) => [s.url, s]));
  const byId = new Map(sources.sources.map((s) => [s.source_id, s]));
  shown = { jobId, result, byUrl, byId, ctx };
  $("#stat-sources").textContent = String(result.output.sources.length);
  $("#stat-claims").textContent = String(claims.verified);
  const onCitation = (n) => openCitation(n).catch((err) => ctx.report(err, $("#source-summary")));
  $("#report").replaceChildren(renderMarkdown(result.report, onCitation));
  renderVerification(result.verification);
  const levels = new Map(claims.claims.filter((c) => c.id).map((c) => [c.id, c.level]));
  renderFindings(result.verified_findings, levels, onCitation);
  renderClaims(claims, onCitation);
  show($("#result-view"), true);
  $("#source-close").onclick = () => show($("#source-panel"), false);
  for (const button of document.querySelectorAll("#exports button[data-format]")) {
    button.onclick = () => download(jobId, button.dataset.format, ctx);
  }
}

// Fetched with the key (a plain link could not send it), then saved from a blob: URL.
async function download(jobId, format, ctx) {
  const error = $("#export-error");
  show(error, false);
  try {
    const { blob, filename } = await apiFile(`/api/research/jobs/${jobId}/report?format=${format}`);
    const url = URL.createObjectURL(blob);
    const a = el("a");
    a.href = url;
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (err) {
    ctx.report(err, error);
  }
}

// [n] in the report is the n-th entry of the output's sources; its stored row (scores,
// id) is found by URL, the address both carry.
function sourceOf(n) {
  const listed = shown.result.output.sources[n - 1];
  if (!listed) return { listed: null, row: null };
  return { listed, row: shown.byUrl.get(listed.url) || null };
}

function citationNumber(sourceId) {
  const row = shown.byId.get(sourceId);
  const i = row ? shown.result.output.sources.findIndex((s) => s.url === row.url) : -1;
  return i + 1;
}

async function openCitation(n) {
  const { listed, row } = sourceOf(n);
  const panel = $("#source-panel");
  show(panel, true);
  document.querySelectorAll("button.cite.active").forEach((b) => b.classList.remove("active"));
  document.querySelectorAll(`button.cite[data-n="${n}"]`).forEach((b) => b.classList.add("active"));
  $("#source-title").textContent = `[${n}] ` + (listed ? listed.title : "unknown source");
  const link = $("#source-url");
  link.textContent = listed ? listed.url : "";
  if (listed && /^https?:/i.test(listed.url)) link.href = listed.url;
  else link.removeAttribute("href");
  renderScores(row);
  const text = $("#source-text");
  text.replaceChildren();
  $("#source-summary").textContent = "";
  if (!row) {
    $("#source-summary").textContent = listed ? "This source's scores and text are not stored." : `The report lists no source ${n}.`;
    return;
  }
  const data = await api(`/api/research/jobs/${shown.jobId}/sources/${encodeURIComponent(row.source_id)}/text`);
  renderSourceText(data);
  const first = text.querySelector("mark.cited") || text.querySelector("mark");
  if (first) first.scrollIntoView({ block: "center" });
}

function renderScores(row) {
  const list = $("#source-scores");
  list.replaceChildren();
  if (!row) return;
  for (const [key, label, fmt] of SCORES) {
    const item = el("div");
    item.append(el("dt", null, label), el("dd", null, fmt(row[key])));
    item.dataset.score = key;
    list.append(item);
  }
}

// The canonical text with each passage wrapped in <mark>: cited ones (quoted by a claim)
// strongly, the digest's other evidence lightly. Overlaps keep the earlier passage.
function renderSourceText(data) {
  const box = $("#source-text");
  const spans = data.spans.filter((s) => s.verified && s.start !== null);
  const cited = data.spans.filter((s) => s.cited).length;
  const failed = data.spans.filter((s) => !s.verified);
  let summary = `${cited} cited passage${cited === 1 ? "" : "s"} highlighted, ${spans.length} of ${data.spans.length} passages verified against the archived text.`;
  if (failed.length) summary += " Not verified: " + failed.map((s) => `${s.locator} (${s.reason})`).join("; ");
  $("#source-summary").textContent = summary;
  if (data.text === null) {
    box.append(el("p", "error", "The source text is not available: " + data.reason));
    return;
  }
  let at = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    box.append(data.text.slice(at, s.start));
    const mark = el("mark", s.cited ? "cited" : "evidence", data.text.slice(s.start, s.end));
    mark.title = (s.cited ? "Quoted by " + s.claim_ids.join(", ") : "Digest evidence") + " · " + s.locator;
    mark.dataset.locator = s.locator;
    box.append(mark);
    at = s.end;
  }
  box.append(data.text.slice(at));
}

function citeButtons(citations, onCitation) {
  const span = el("span", "cites");
  const numbers = [...new Set(citations.map((c) => citationNumber(c.sourceId || c.source_id)).filter((n) => n > 0))];
  for (const n of numbers) {
    const b = el("button", "cite", `[${n}]`);
    b.type = "button";
    b.dataset.n = String(n);
    b.addEventListener("click", () => onCitation(n));
    span.append(b);
  }
  return span;
}

const LEVELS = ["quoted", "entailed", "supported"];
const LEVEL_TITLES = {
  quoted: "Quoted: the text is a source's own words",
  entailed: "Entailed: passed the code's checks, and a verifier model judged its quotes to entail it",
  supported: "Supported: passed the code's checks only; no verifier model judged it",
};

function levelBadge(level) {
  const badge = el("span", "level", level || "not recorded");
  badge.dataset.level = level || "none";
  badge.title = LEVEL_TITLES[level] || "This claim was stored before check levels were recorded";
  return badge;
}

function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

// name -> count, known levels first, then anything else the summary holds.
function countList(target, counts, order = []) {
  target.replaceChildren();
  const names = [...order.filter((k) => k in counts), ...Object.keys(counts).filter((k) => !order.includes(k)).sort()];
  for (const name of names) {
    const item = el("div");
    item.dataset.level = name;
    const term = el("dt", null, name);
    if (LEVEL_TITLES[name]) term.title = LEVEL_TITLES[name];
    item.append(term, el("dd", null, String(counts[name])));
    target.append(item);
  }
  if (!names.length) target.append(el("div", "hint", "none"));
}

function reasons(counts) {
  const entries = Object.entries(counts || {}).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries.map(([why, n]) => `${why} ${n}`).join(", ");
}

// What the checks did, from the result's verification summary (null: stored before it existed).
function renderVerification(v) {
  show($("#verification"), true);
  show($("#verification-none"), !v);
  show($("#verification-counts"), Boolean(v));
  if (!v) return;
  countList($("#verification-sentences"), v.sentences || {}, LEVELS);
  const removed = Object.values(v.sentences_removed || {}).reduce((a, b) => a + b, 0);
  $("#verification-removed").textContent = removed ? `${plural(removed, "sentence")}: ${reasons(v.sentences_removed)}` : "none";
  countList($("#verification-claims"), v.claims || {}, LEVELS);
  const refused = Object.values(v.claims_rejected || {}).reduce((a, b) => a + b, 0);
  $("#verification-claims-rejected").textContent = refused
    ? `${plural(refused, "claim")} rejected by the claim check: ${reasons(v.claims_rejected)}` : "No claim was rejected.";
  let judge = v.judge || "not recorded";
  if (v.judge_model) judge += ` (${v.judge_model}${v.judge_tokens ? `, ${v.judge_tokens} tokens` : ""})`;
  $("#verification-judge").textContent = judge;
}

function renderFindings(findings, levels, onCitation) {
  const list = $("#findings");
  list.replaceChildren();
  for (const f of findings) {
    const item = el("li");
    const level = f.level || levels.get(f.claim_id) || null;
    const text = level === "quoted" ? `\u201c${f.text}\u201d ` : f.text + " ";
    item.append(el("span", null, text), levelBadge(level), el("span", "hint", ` (confidence ${percent(f.confidence)}) `),
      citeButtons(f.citations, onCitation));
    list.append(item);
  }
  show($("#findings-empty"), findings.length === 0);
}

function renderClaims(listing, onCitation) {
  const kept = listing.claims.filter((c) => c.status === "verified");
  const byLevel = LEVELS.map((lv) => [lv, kept.filter((c) => c.level === lv).length]).filter(([, n]) => n);
  const levels = byLevel.length ? " (" + byLevel.map(([lv, n]) => `${n} ${lv}`).join(", ") + ")" : "";
  $("#claims-summary").textContent = `${listing.verified} kept by the claim check${levels}, ${listing.rejected} rejected.`;
  const body = $("#claims-table tbody");
  body.replaceChildren();
  for (const c of listing.claims) {
    const row = el("tr");
    row.dataset.status = c.status;
    const status = el("span", "status", c.status + (c.contradicted ? " · contradicted" : ""));
    status.dataset.status = c.status;
    const level = el("td");
    if (c.status === "verified") level.append(levelBadge(c.level));
    const last = el("td");
    if (c.status === "verified") last.append(citeButtons(c.citations, onCitation));
    else last.append(el("span", "hint", c.reason || ""));
    row.append(el("td"), el("td", null, c.text), level, el("td", null, percent(c.confidence)), last);
    row.children[0].append(status);
    body.append(row);
  }
}
