// The page's entry point: which view an address shows (/ or /jobs/{id}), the API key
// prompt, the question form and the job list. The job view lives in job.js.

import { api, ApiError, apiKey, setApiKey } from "./api.js";
import { closeJob, openJob } from "./job.js";
import { $, el, show, when } from "./dom.js";

const JOB_PATH = /^\/jobs\/([0-9a-fA-F-]{36})\/?$/;
const PAGE_SIZE = 20;
let jobsOffset = 0;
let jobsTimer = null;

// A 401 anywhere sends the person to the key prompt; anything else is shown where it happened.
export function report(err, where) {
  if (err instanceof ApiError && err.status === 401) {
    askForKey(apiKey() ? "The gateway refused this key: " + err.message : "This gateway requires an API key.");
    return;
  }
  const target = where || $("#page-error");
  target.textContent = err.message || String(err);
  show(target, true);
  console.error(err);
}

function askForKey(message) {
  closeJob();
  for (const id of ["#home-view", "#job-view"]) show($(id), false);
  $("#key-message").textContent = message;
  show($("#key-view"), true);
  $("#key-input").focus();
}

export function navigate(path) {
  if (location.pathname !== path) history.pushState({}, "", path);
  route();
}

function route() {
  closeJob();
  clearInterval(jobsTimer);
  show($("#page-error"), false);
  show($("#key-view"), false);
  const m = location.pathname.match(JOB_PATH);
  show($("#home-view"), !m);
  show($("#job-view"), !!m);
  if (m) openJob(m[1].toLowerCase(), { report, navigate });
  else openHome();
}

// -- home: the form and the job list ---------------------------------------------------

async function openHome() {
  document.title = "Deep research";
  try {
    await loadCorpora();
    await loadJobs(true);
  } catch (err) {
    report(err);
  }
  jobsTimer = setInterval(() => loadJobs(true).catch((err) => report(err)), 5000);
}

async function loadCorpora() {
  const { corpora } = await api("/api/research/corpora");
  const box = $("#corpora");
  box.querySelectorAll("label").forEach((l) => l.remove());
  for (const c of corpora) {
    const label = el("label", "corpus");
    const input = el("input");
    input.type = "checkbox";
    input.name = "corpus";
    input.value = c.name;
    const size = c.documents == null ? " (" + (c.problem || "size unknown") + ")" : " (" + c.documents + " documents)";
    label.append(input, " " + c.name, el("span", "hint", size));
    box.append(label);
  }
  show($("#corpora-empty"), corpora.length === 0);
}

function ticked(name) {
  return [...document.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);
}

async function submit(event) {
  event.preventDefault();
  const error = $("#form-error");
  show(error, false);
  const corpora = ticked("corpus");
  const providers = ticked("provider");
  const body = {
    question: $("#question").value,
    context: $("#context").value.trim() || null,
    corpora: corpora.length ? corpora : null,
    providers: providers.length ? providers : null,
    max_iterations: Number($("#max-iterations").value),
    clarify: $("#clarify").checked,
    review_plan: $("#review-plan").checked,
    report_depth: $("#report-depth").value,
  };
  $("#submit").disabled = true;
  try {
    const accepted = await api("/api/research/jobs", { method: "POST", body });
    navigate("/jobs/" + accepted.job_id);
  } catch (err) {
    report(err, error);
  } finally {
    $("#submit").disabled = false;
  }
}

function jobRow(job) {
  const row = el("tr");
  row.dataset.jobId = job.job_id;
  const link = el("a", null, job.question);
  link.href = "/jobs/" + job.job_id;
  link.dataset.nav = "";
  const status = el("span", "status", job.status);
  status.dataset.status = job.status;
  row.append(el("td"), el("td"), el("td", null, Math.round(job.progress * 100) + "%"), el("td", null, when(job.created_at)));
  row.children[0].append(link);
  row.children[1].append(status);
  return row;
}

async function loadJobs(fromStart) {
  if (fromStart) jobsOffset = 0;
  const limit = fromStart ? Math.max(PAGE_SIZE, $("#jobs-table tbody").children.length) : PAGE_SIZE;
  const page = await api(`/api/research/jobs?limit=${Math.min(limit, 100)}&offset=${jobsOffset}`);
  const body = $("#jobs-table tbody");
  if (fromStart) body.replaceChildren();
  for (const job of page.items) body.append(jobRow(job));
  jobsOffset += page.items.length;
  show($("#jobs-empty"), page.total === 0);
  show($("#jobs-more"), jobsOffset < page.total);
}

// -- wiring ---------------------------------------------------------------------------

function saveKey(event) {
  event.preventDefault();
  setApiKey($("#key-input").value.trim());
  $("#key-input").value = "";
  route();
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-nav]");
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(new URL(link.href).pathname);
});

window.addEventListener("popstate", route);

window.addEventListener("DOMContentLoaded", () => {
  $("#ask-form").addEventListener("submit", submit);
  $("#key-form").addEventListener("submit", saveKey);
  $("#key-forget").addEventListener("click", () => {
    setApiKey("");
    askForKey("The key was forgotten. Enter a key to continue.");
  });
  $("#key-button").addEventListener("click", () => askForKey(apiKey() ? "Replace the key in use." : "Enter an API key."));
  $("#jobs-refresh").addEventListener("click", () => loadJobs(true).catch((err) => report(err)));
  $("#jobs-more").addEventListener("click", () => loadJobs(false).catch((err) => report(err)));
  route();
});
