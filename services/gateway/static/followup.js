// A job's thread of follow-up questions: "Follow-up of <parent>" above a job that
// follows another up, links to the jobs that follow this one up, and, on a completed
// job, a form to ask a follow-up (a new job that starts from this one's research).

import { api } from "./api.js";
import { $, el, show } from "./dom.js";

const questions = new Map(); // job id -> its question, for the thread's links
let shownFor = null; // the job whose follow-up form is filled in

async function questionOf(jobId) {
  if (!questions.has(jobId)) {
    try {
      questions.set(jobId, (await api("/api/research/jobs/" + jobId)).question);
    } catch (err) {
      console.warn("the question of job " + jobId + " could not be read", err);
      return jobId; // the link still leads there
    }
  }
  return questions.get(jobId);
}

function jobLink(jobId, text) {
  const link = el("a", null, text);
  link.href = "/jobs/" + jobId;
  link.dataset.nav = "";
  return link;
}

async function fillThread(job) {
  const parent = $("#job-parent");
  if (job.parent_job_id) {
    const text = await questionOf(job.parent_job_id);
    parent.replaceChildren("Follow-up of ", jobLink(job.parent_job_id, text));
  }
  show(parent, !!job.parent_job_id);
  const list = $("#job-follow-ups-list");
  const ids = job.follow_ups || [];
  const items = await Promise.all(ids.map(async (id) => {
    const item = el("li");
    item.append(jobLink(id, await questionOf(id)));
    return item;
  }));
  list.replaceChildren(...items);
  show($("#job-follow-ups"), ids.length > 0);
}

// Called with the job each time the job view shows it.
export function renderThread(job, ctx) {
  questions.set(job.job_id, job.question);
  fillThread(job).catch((err) => ctx.report(err, $("#job-error")));
  const completed = job.status === "COMPLETED";
  if (shownFor !== job.job_id) {
    $("#follow-up-question").value = "";
    show($("#follow-up-error"), false);
    shownFor = job.job_id;
  }
  show($("#follow-up-form"), completed);
}

export function clearThread() {
  for (const id of ["#job-parent", "#job-follow-ups", "#follow-up-form", "#follow-up-error"]) show($(id), false);
  $("#job-parent").replaceChildren();
  $("#job-follow-ups-list").replaceChildren();
  shownFor = null;
}

async function ask(event, currentJob, ctx) {
  event.preventDefault();
  const job = currentJob();
  if (!job) return;
  const error = $("#follow-up-error");
  show(error, false);
  $("#follow-up-send").disabled = true;
  try {
    const body = { question: $("#follow-up-question").value };
    const accepted = await api(`/api/research/jobs/${job.job_id}/follow-up`, { method: "POST", body });
    ctx.navigate("/jobs/" + accepted.job_id);
  } catch (err) {
    ctx.report(err, error); // a 409 says the job's status, a 422 what is wrong with the question
  } finally {
    $("#follow-up-send").disabled = false;
  }
}

// currentJob() gives the job the view shows (or null).
export function wireFollowUp(currentJob, ctx) {
  $("#follow-up-form").addEventListener("submit", (event) => ask(event, currentJob, ctx));
}
