// The research plan of a job waiting on its review (a request with review_plan): an
// editable list of the refined question, the checklist and the steps. What the person
// leaves in it is the body of POST /api/research/jobs/{id}/plan; an item or step added
// here has no id (the gateway gives it one), one removed is left out.

import { $, el, show } from "./dom.js";

const KINDS = ["independent", "hybrid", "dependent"];

function removable(row) {
  const remove = el("button", "secondary small", "Remove");
  remove.type = "button";
  remove.setAttribute("aria-label", "Remove");
  remove.addEventListener("click", () => row.remove());
  row.append(remove);
  return row;
}

function textInput(className, value, label) {
  const input = el("input", className);
  input.type = "text";
  input.value = value || "";
  input.setAttribute("aria-label", label);
  return input;
}

function itemRow(item) {
  const row = el("li", "plan-item");
  if (item.id) row.dataset.id = item.id;
  row.append(el("span", "plan-id", item.id || "new"), textInput("plan-description", item.description, "Checklist item"));
  return removable(row);
}

function stepRow(step) {
  const row = el("li", "plan-step");
  if (step.id) row.dataset.id = step.id;
  const kind = el("select", "plan-kind");
  kind.setAttribute("aria-label", "Kind");
  for (const k of KINDS) {
    const option = el("option", null, k);
    option.value = k;
    kind.append(option);
  }
  kind.value = step.kind || "independent";
  const deps = textInput("plan-depends", (step.depends_on || []).join(", "), "Depends on (step ids)");
  deps.placeholder = "after (ids)";
  row.append(el("span", "plan-id", step.id || "new"), textInput("plan-text", step.text, "Step"), kind, deps);
  return removable(row);
}

function lines(text) {
  return text.split("\n").map((s) => s.trim()).filter(Boolean);
}

// The plan as it stands in the form.
export function planBody() {
  const withId = (row, fields) => (row.dataset.id ? { id: row.dataset.id, ...fields } : fields);
  return {
    refined_question: $("#plan-question").value,
    scope: { in_scope: lines($("#plan-in-scope").value), out_of_scope: lines($("#plan-out-scope").value) },
    checklist: [...document.querySelectorAll("#plan-checklist li")].map((row) =>
      withId(row, { description: row.querySelector(".plan-description").value })),
    steps: [...document.querySelectorAll("#plan-steps li")].map((row) =>
      withId(row, {
        text: row.querySelector(".plan-text").value,
        kind: row.querySelector(".plan-kind").value,
        depends_on: row.querySelector(".plan-depends").value.split(",").map((s) => s.trim()).filter(Boolean),
      })),
  };
}

// Shown once per wait: a plan being edited is not replaced by the same plan again.
export function showPlan(plan) {
  const view = $("#plan-view");
  if (!view.hidden) return;
  $("#plan-question").value = plan.refined_question;
  $("#plan-in-scope").value = ((plan.scope && plan.scope.in_scope) || []).join("\n");
  $("#plan-out-scope").value = ((plan.scope && plan.scope.out_of_scope) || []).join("\n");
  $("#plan-checklist").replaceChildren(...plan.checklist.map(itemRow));
  $("#plan-steps").replaceChildren(...plan.steps.map(stepRow));
  show($("#plan-error"), false);
  show(view, true);
}

export function hidePlan() {
  show($("#plan-view"), false);
}

let wired = false;

export function wirePlan(onApprove) {
  if (wired) return;
  wired = true;
  $("#plan-add-item").addEventListener("click", () => $("#plan-checklist").append(itemRow({ description: "" })));
  $("#plan-add-step").addEventListener("click", () => $("#plan-steps").append(stepRow({ text: "" })));
  $("#plan-form").addEventListener("submit", (event) => {
    event.preventDefault();
    onApprove(planBody());
  });
}
