// A job's research trace (GET /api/research/jobs/{id}/trace), in a closed <details>
// below the result: per pass the searches run per provider, what each provider
// returned, the checklist after the pass, the claims kept and rejected and each
// stage's time, tokens, cost and entailment judge; then the research memory's open
// gaps and the user's plan review. Filled when the job ends; read again each time it
// is opened (a running job's trace grows). Every text from the trace is a text node.

import { api } from "./api.js";
import { $, el, show } from "./dom.js";

const CONTEXT_ITERATION = -1; // the quick context search before the first plan

let shownJob = null; // the job whose trace the section holds (or is loading)
let loads = 0; // only the latest request's answer is shown

function cost(usd) {
  return "$" + (usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2));
}

function table(kind, head, rows) {
  const t = el("table", "trace-table trace-" + kind);
  const tr = el("tr");
  tr.append(...head.map((h) => el("th", null, h)));
  const thead = el("thead");
  thead.append(tr);
  const tbody = el("tbody");
  tbody.append(...rows.map((cells) => {
    const row = el("tr");
    row.append(...cells.map((c) => {
      const td = el("td");
      td.append(c instanceof Node ? c : document.createTextNode(String(c)));
      return td;
    }));
    return row;
  }));
  t.append(thead, tbody);
  return t;
}

function list(texts, className) {
  const ul = el("ul", className);
  ul.append(...texts.map((t) => el("li", null, t)));
  return ul;
}

function title(n) {
  return n === CONTEXT_ITERATION ? "Quick context search (before the plan)" : "Iteration " + (n + 1);
}

function searches(it) {
  const byProvider = new Map();
  for (const q of it.queries || []) {
    if (!byProvider.has(q.provider)) byProvider.set(q.provider, []);
    byProvider.get(q.provider).push(q.text);
  }
  for (const p of Object.keys(it.results || {})) if (!byProvider.has(p)) byProvider.set(p, []);
  if (!byProvider.size) return [];
  const rows = [...byProvider].map(([provider, texts]) => {
    const r = (it.results || {})[provider];
    return [provider, texts.length ? list(texts, "trace-queries") : "–", r ? r.count : "–", r ? r.new_sources : "–"];
  });
  return [el("h4", null, "Searches"), table("searches", ["Provider", "Queries", "Results", "New sources"], rows)];
}

function checklist(it) {
  if (!(it.checklist || []).length) return [];
  const rows = it.checklist.map((c) => {
    const badge = el("span", "status", c.status);
    badge.dataset.status = c.status;
    return [badge, c.id, c.description];
  });
  return [el("h4", null, "Checklist after the pass"), table("checklist", ["Status", "Item", "Description"], rows)];
}

function judge(j) {
  if (!j) return "–";
  const parts = [`${j.statements} asked, ${j.entailed} entailed, ${j.vetoed} vetoed`];
  if (j.status) parts.push(j.status);
  if (j.model) parts.push(j.model);
  return parts.join(" · ");
}

function stages(it) {
  if (!(it.stages || []).length) return [];
  const rows = it.stages.map((s) => {
    const t = s.tokens || {};
    const d = Number(s.duration_s || 0);
    return [s.stage, d.toFixed(d < 10 ? 2 : 1) + " s", t.input || 0, t.output || 0,
      t.cost_usd > 0 ? cost(t.cost_usd) : "–", judge(s.judge)];
  });
  return [el("h4", null, "Stages"), table("stages", ["Stage", "Duration", "Tokens in", "Tokens out", "Cost", "Entailment judge"], rows)];
}

function iteration(it) {
  const part = el("section", "trace-iteration");
  part.dataset.iteration = String(it.iteration);
  part.append(el("h3", null, title(it.iteration)));
  if (it.claims_kept !== null && it.claims_kept !== undefined) {
    part.append(el("p", "trace-claims", `Claims: ${it.claims_kept} kept, ${it.claims_rejected ?? "?"} rejected`));
  }
  if ((it.step_order || []).length) part.append(el("p", "hint", "Steps in the order they ran: " + it.step_order.join(", ")));
  part.append(...searches(it), ...checklist(it), ...stages(it));
  return part;
}

function memory(m) {
  const part = el("section", "trace-memory");
  part.append(el("h3", null, "Research memory"));
  const stats = el("dl", "stats");
  for (const [label, items] of [["Insights", m.insights], ["Open gaps", m.gaps], ["Contradictions", m.contradictions],
    ["Searches", m.searched]]) {
    const box = el("div");
    box.append(el("dt", null, label), el("dd", null, (items || []).length));
    stats.append(box);
  }
  part.append(stats);
  const gaps = m.gaps || [];
  if (gaps.length) {
    const ul = el("ul", "trace-gaps");
    ul.append(...gaps.map((g) => {
      const li = el("li");
      const badge = el("span", "status", g.status);
      badge.dataset.status = g.status;
      li.append(badge, " ", el("strong", null, g.item_id), " ", g.description);
      const tried = g.tried || [];
      li.append(el("div", "hint", tried.length ? "Searches tried for it:" : "No search tried for it yet."));
      if (tried.length) li.append(list(tried, "trace-queries"));
      return li;
    }));
    part.append(ul);
  }
  return part;
}

function reviews(items) {
  const part = el("section", "trace-review");
  part.append(el("h3", null, "Plan review"));
  for (const r of items) {
    const changes = r.changes || [];
    const waited = `Waited ${Number(r.waited_s || 0).toFixed(1)} s; `;
    part.append(el("p", null, waited + (r.approved_as_is || !changes.length ? "approved as it was" : `${changes.length} change(s) by the user:`)));
    if (changes.length) {
      part.append(list(changes.map((c) => {
        const what = [c.action, c.part, c.id].filter(Boolean).join(" ");
        const detail = c.before && c.after ? `${c.before} → ${c.after}` : c.after || c.before || "";
        return what + (detail ? ": " + detail : "");
      }), "trace-changes"));
    }
  }
  return part;
}

function render(trace) {
  const body = $("#trace-body");
  const parts = [];
  const running = !["COMPLETED", "FAILED", "CANCELLED", "EXPIRED"].includes(trace.status);
  if (running) parts.push(el("p", "hint", `The job is ${trace.status}: this is its trace as of ${new Date().toLocaleTimeString()}; close and open again to refresh.`));
  if ((trace.plan_review || []).length) parts.push(reviews(trace.plan_review));
  const iterations = trace.iterations || [];
  if (!iterations.length) parts.push(el("p", "hint", "No pass recorded yet."));
  parts.push(...iterations.map(iteration));
  if (trace.memory) parts.push(memory(trace.memory));
  body.replaceChildren(...parts);
}

async function load(jobId, ctx) {
  const mine = ++loads;
  shownJob = jobId;
  const error = $("#trace-error");
  if (!$("#trace-body").childElementCount) $("#trace-body").replaceChildren(el("p", "hint", "Loading…"));
  try {
    const trace = await api(`/api/research/jobs/${jobId}/trace`);
    if (mine !== loads || shownJob !== jobId) return;
    show(error, false);
    render(trace);
  } catch (err) {
    if (mine === loads && shownJob === jobId) ctx.report(err, error);
  }
}

// Fills the section with the job's trace (called when the job has ended).
export function showTrace(jobId, ctx) {
  return load(jobId, ctx);
}

// currentJob() gives the job the view shows (or null): opening the section reads its trace again.
export function wireTrace(currentJob, ctx) {
  $("#trace-view").addEventListener("toggle", () => {
    const job = currentJob();
    if ($("#trace-view").open && job) load(job.job_id, ctx);
  });
}

export function clearTrace() {
  loads++;
  shownJob = null;
  const view = $("#trace-view");
  view.open = false;
  $("#trace-body").replaceChildren();
  show($("#trace-error"), false);
}
