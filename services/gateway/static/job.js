// One job, live: its status and counters from the server-sent event stream, the
// clarifying questions and their answer, the plan to review (plan.js), cancelling, and
// then its report (report.js).

import { api, ApiError, streamEvents } from "./api.js";
import { $, duration, el, show } from "./dom.js";
import { clearThread, renderThread, wireFollowUp } from "./followup.js";
import { hidePlan, showPlan, wirePlan } from "./plan.js";
import { clearResult, showResult } from "./report.js";
import { clearTrace, showTrace, wireTrace } from "./trace.js";

const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED", "EXPIRED"]);
// Where each stage sits on the job's overall progress (the gateway stores the same).
const STAGE_SPAN = { plan: [0, 0.1], retrieve: [0.1, 0.4], digest: [0.4, 0.6], score: [0.6, 0.8], synthesize: [0.8, 1] };

let current = null;

export function closeJob() {
  if (!current) return;
  current.abort.abort();
  clearInterval(current.ticker);
  current = null;
}

function overall(stage, within) {
  const [lo, hi] = STAGE_SPAN[stage] || [0, 1];
  return lo + (hi - lo) * Math.min(1, Math.max(0, within));
}

function setProgress(job, value) {
  job.progress = Math.max(job.progress || 0, value);
  const pct = Math.round(job.progress * 100);
  $("#progress-bar").style.width = pct + "%";
  $("#progress").setAttribute("aria-valuenow", String(pct));
}

function setStatus(job, status, reason) {
  job.status = status;
  const node = $("#job-status");
  node.textContent = status;
  node.dataset.status = status;
  $("#job-reason").textContent = reason ? "— " + reason : "";
  show($("#cancel-button"), !TERMINAL.has(status));
  if (status !== "AWAITING_INPUT") {
    show($("#clarify-view"), false);
    hidePlan();
  }
}

function setTokens(input, output, calls, cost) {
  const money = cost > 0 ? ` · $${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}` : "";
  $("#stat-tokens").textContent = `${input} in / ${output} out · ${calls} calls${money}`;
}

function tickElapsed(job) {
  const from = job.started_at || job.created_at;
  if (!from) return;
  const to = job.finished_at ? new Date(job.finished_at) : new Date();
  $("#stat-elapsed").textContent = duration((to - new Date(from)) / 1000);
}

function render(job) {
  document.title = job.question.slice(0, 60) + " · Deep research";
  $("#job-question").textContent = job.question;
  $("#job-context").textContent = job.context ? "Context: " + job.context : "";
  setStatus(job, job.status, job.error);
  setProgress(job, job.status === "COMPLETED" ? 1 : job.progress);
  $("#stat-stage").textContent = job.stage || "–";
  $("#stat-iteration").textContent = String(job.iteration);
  const t = job.token_usage;
  setTokens(t.input_tokens, t.output_tokens, t.llm_calls, t.cost_usd || 0);
  tickElapsed(job);
  if (job.status === "AWAITING_INPUT" && job.clarifying_questions && !job.plan) showClarify(job.clarifying_questions);
  if (job.status === "AWAITING_INPUT" && job.plan) showPlan(job.plan);
}

function showClarify(questions) {
  const list = $("#clarify-questions");
  list.replaceChildren(...questions.map((q) => el("li", null, q)));
  show($("#clarify-view"), true);
}

function onEvent(job, event) {
  // A stage's "done" can arrive after the next stage's "started": only work under way
  // names the current stage.
  const underWay = event.type === "progress" || (event.type === "stage" && event.state !== "done");
  if (event.stage && underWay) $("#stat-stage").textContent = event.stage;
  if (event.iteration !== undefined) $("#stat-iteration").textContent = String(Math.max(event.iteration, job.iteration || 0));
  if (event.iteration !== undefined) job.iteration = Math.max(event.iteration, job.iteration || 0);
  if (event.type === "progress") {
    setProgress(job, overall(event.stage, event.progress));
    $("#job-message").textContent = event.stage + ": " + event.message;
    if (event.counts.sources !== undefined) $("#stat-sources").textContent = String(event.counts.sources);
    if (event.counts.claims !== undefined) $("#stat-claims").textContent = String(event.counts.claims);
  } else if (event.type === "stage") {
    if (event.state === "done") setProgress(job, overall(event.stage, 1));
    if (event.state === "retrying") $("#job-message").textContent = `${event.stage}: retrying (${event.error || "transient error"})`;
    const stages = Object.values((event.usage && event.usage.by_stage) || {});
    if (stages.length) {
      const sum = (k) => stages.reduce((a, s) => a + (s[k] || 0), 0);
      setTokens(sum("input_tokens"), sum("output_tokens"), sum("calls"), sum("cost_usd"));
    }
  } else if (event.type === "clarification") {
    showClarify(event.questions);
  } else if (event.type === "plan_review") {
    job.pendingPlan = event.plan; // shown once the gateway has stored the wait (its status event)
  } else if (event.type === "status") {
    setStatus(job, event.status, event.reason);
    if (event.status === "AWAITING_INPUT" && job.pendingPlan) showPlan(job.pendingPlan);
    if (event.status !== "AWAITING_INPUT") job.pendingPlan = null;
  } else if (event.type === "failed") {
    $("#job-message").textContent = "failed" + (event.stage ? " in " + event.stage : "") + ": " + event.reason;
  } else if (event.type.startsWith("digest.")) {
    $("#job-message").textContent = "digest: " + event.type.slice(7) + " " + event.source_id;
  }
}

async function follow(state, ctx) {
  let lastEventId = null;
  let interrupted = false; // an outage message is shown until a stream is open again
  while (current === state) {
    // An "error" event: NATS or PostgreSQL went away and the gateway ended the stream.
    // Its message is shown, and the stream resumes after `retry` ms from lastEventId.
    let outage = null;
    try {
      await streamEvents(state.job.job_id, {
        signal: state.abort.signal,
        lastEventId,
        onOpen: () => {
          if (interrupted) show($("#job-error"), false);
          interrupted = false;
        },
        onEvent: (event, id) => {
          if (event.type === "error") {
            outage = event;
            return;
          }
          if (id) lastEventId = id;
          if (current === state) onEvent(state.job, event);
        },
      });
      if (outage) {
        const wait = Math.min(60000, Math.max(500, Number(outage.retry) || 5000));
        ctx.report(new Error(outage.message + "; reconnecting in " + Math.round(wait / 1000) + "s"), $("#job-error"));
        interrupted = true;
        await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      show($("#job-error"), false);
    } catch (err) {
      if (state.abort.signal.aborted) return;
      if (err instanceof ApiError && (err.status === 401 || err.status === 404)) return ctx.report(err, $("#job-error"));
      const wait = Math.min(60000, (err.retryAfter || 2) * 1000);
      ctx.report(new Error("the event stream broke (" + err.message + "); reconnecting in " + Math.round(wait / 1000) + "s"), $("#job-error"));
      interrupted = true;
      await new Promise((r) => setTimeout(r, wait));
    }
    if (current !== state) return;
    // The stream ends after the terminal status; the stored job is the truth either way.
    const job = await api("/api/research/jobs/" + state.job.job_id).catch((err) => ctx.report(err, $("#job-error")));
    if (job && current === state) {
      state.job = { ...job, progress: Math.max(job.progress, state.job.progress || 0) };
      render(state.job);
      if (TERMINAL.has(job.status)) return finish(state, ctx);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function finish(state, ctx) {
  clearInterval(state.ticker);
  tickElapsed(state.job);
  renderThread(state.job, ctx); // a completed job can be followed up
  showTrace(state.job.job_id, ctx); // reports its own errors
  if (state.job.status === "COMPLETED") await showResult(state.job.job_id, ctx).catch((err) => ctx.report(err, $("#job-error")));
}

async function cancel(ctx) {
  if (!current) return;
  $("#cancel-button").disabled = true;
  try {
    const job = await api(`/api/research/jobs/${current.job.job_id}/cancel`, { method: "POST" });
    setStatus(current.job, job.status, job.error);
  } catch (err) {
    ctx.report(err, $("#job-error"));
  } finally {
    $("#cancel-button").disabled = false;
  }
}

async function answer(event, ctx) {
  event.preventDefault();
  if (!current) return;
  $("#clarify-send").disabled = true;
  try {
    const body = { answer: $("#clarify-answer").value };
    const job = await api(`/api/research/jobs/${current.job.job_id}/clarification`, { method: "POST", body });
    $("#clarify-answer").value = "";
    setStatus(current.job, job.status, job.error);
  } catch (err) {
    ctx.report(err, $("#job-error"));
  } finally {
    $("#clarify-send").disabled = false;
  }
}

async function approvePlan(body, ctx) {
  if (!current) return;
  $("#plan-send").disabled = true;
  show($("#plan-error"), false);
  try {
    const job = await api(`/api/research/jobs/${current.job.job_id}/plan`, { method: "POST", body });
    setStatus(current.job, job.status, job.error);
  } catch (err) {
    ctx.report(err, $("#plan-error")); // a 422 names the field; the plan stays as edited
  } finally {
    $("#plan-send").disabled = false;
  }
}

function reset() {
  for (const id of ["#job-question", "#job-context", "#job-reason", "#job-message"]) $(id).textContent = "";
  for (const id of ["#stat-stage", "#stat-iteration", "#stat-sources", "#stat-claims", "#stat-tokens", "#stat-elapsed"]) $(id).textContent = "–";
  $("#progress-bar").style.width = "0%";
  for (const id of ["#job-error", "#clarify-view", "#plan-view", "#cancel-button"]) show($(id), false);
  clearResult();
  clearThread();
  clearTrace();
}

let wired = false;

export async function openJob(jobId, ctx) {
  closeJob();
  reset();
  if (!wired) {
    wired = true;
    $("#cancel-button").addEventListener("click", () => cancel(ctx));
    $("#clarify-form").addEventListener("submit", (event) => answer(event, ctx));
    wirePlan((body) => approvePlan(body, ctx));
    wireFollowUp(() => (current ? current.job : null), ctx);
    wireTrace(() => (current ? current.job : null), ctx);
  }
  const state = { job: { job_id: jobId, progress: 0 }, abort: new AbortController(), ticker: null };
  current = state;
  let job;
  try {
    job = await api("/api/research/jobs/" + jobId);
  } catch (err) {
    return ctx.report(err, $("#job-error"));
  }
  if (current !== state) return;
  state.job = job;
  render(job);
  renderThread(job, ctx);
  if (TERMINAL.has(job.status)) return finish(state, ctx);
  state.ticker = setInterval(() => tickElapsed(state.job), 1000);
  follow(state, ctx);
}
