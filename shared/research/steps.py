"""The plan's steps as a graph: the checks a plan passes when it is made, and which
steps can run now.

A step names the steps it needs in ``depends_on``. A plan whose steps name an
unknown step, themselves, or each other in a cycle cannot be executed and is
rejected when it is made (:func:`graph_problem`). While the job runs:

* an independent step searches in the first iteration;
* a hybrid step searches once every step it depends on has verified claims, with
  queries written from those claims (decomposition, in a refinement pass);
* a dependent step never searches: once every step it depends on has verified
  claims, scoring reasons over them and keeps what verifies (scoring/analysis.py).

A searching step's claims are the claims backed by a source that one of its queries
found (``SubQuestion.searched`` against ``Source.found_by``); a dependent step's are
the analysis claims whose id starts with its own. Planning and scoring both read the
graph, and services do not import each other, so it lives here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from shared.research.envelope import Claim, Plan, ScoredSource, StepKind, SubQuestion

__all__ = [
    "analysis_claim_id",
    "claims_by_step",
    "default_dependencies",
    "graph_problem",
    "mark_ran",
    "ready_steps",
    "topological_order",
]


def graph_problem(steps: Sequence[tuple[str, Sequence[str]]]) -> str | None:
    """Why ``(id, depends_on)`` pairs cannot be executed, or None: a duplicate or blank
    id, a dependency on an unknown id or on the step itself, or a cycle (named)."""
    ids = [i for i, _ in steps]
    if any(not i.strip() for i in ids):
        return "every step needs an id"
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        return f"duplicate step id {', '.join(dupes)}"
    known = set(ids)
    for step_id, deps in steps:
        if step_id in deps:
            return f"step {step_id} depends on itself"
        unknown = [d for d in deps if d not in known]
        if unknown:
            return f"step {step_id} depends on unknown step {', '.join(unknown)}"
    cycle = _find_cycle({i: list(d) for i, d in steps})
    if cycle:
        return "dependency cycle " + " -> ".join(cycle)
    return None


def _find_cycle(graph: Mapping[str, Sequence[str]]) -> list[str] | None:
    """One cycle as a path that returns to its start, or None (iterative DFS: a plan
    is small, but a model may send anything)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in graph:
        if state.get(root):
            continue
        path: list[str] = [root]
        stack = [iter(graph[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(graph.get(nxt, ())))
    return None


def topological_order(steps: Sequence[SubQuestion]) -> list[SubQuestion]:
    """The steps with every step after those it depends on, otherwise in plan order
    (the plan is acyclic; an unknown dependency is ignored here)."""
    by_id = {s.id: s for s in steps}
    out: list[SubQuestion] = []
    placed: set[str] = set()

    def place(step: SubQuestion, seen: frozenset[str]) -> None:
        if step.id in placed or step.id in seen:
            return
        for dep in step.depends_on:
            if dep in by_id:
                place(by_id[dep], seen | {step.id})
        placed.add(step.id)
        out.append(step)

    for step in steps:
        place(step, frozenset())
    return out


def default_dependencies(steps: Sequence[SubQuestion]) -> list[SubQuestion]:
    """A hybrid or dependent step that names no dependency needs the steps before it
    (a hybrid step the searching ones, a dependent step all of them), except any that
    already needs it (which would make a cycle): that is what "needs earlier results"
    means when nothing more precise was said. An independent step depends on nothing."""
    deps: dict[str, list[str]] = {}
    for n, step in enumerate(steps):
        if step.kind is StepKind.INDEPENDENT:
            deps[step.id] = []
        elif step.depends_on:
            deps[step.id] = list(step.depends_on)
        else:
            deps[step.id] = [s.id for s in steps[:n]
                             if (step.kind is StepKind.DEPENDENT or s.kind is not StepKind.DEPENDENT)
                             and step.id not in _needs(s.id, {**deps, **{t.id: t.depends_on for t in steps[n:]}})]
    return [s.model_copy(update={"depends_on": deps[s.id]}) for s in steps]


def _needs(step_id: str, deps: Mapping[str, Sequence[str]]) -> set[str]:
    """Every step ``step_id`` depends on, directly or not."""
    out: set[str] = set()
    todo = list(deps.get(step_id, ()))
    while todo:
        d = todo.pop()
        if d not in out:
            out.add(d)
            todo.extend(deps.get(d, ()))
    return out


def analysis_claim_id(step_id: str, n: int) -> str:
    return f"{step_id}.a{n}"


def claims_by_step(plan: Plan, claims: Iterable[Claim], scored: Sequence[ScoredSource],
                   analysis: Iterable[Claim] = ()) -> dict[str, list[Claim]]:
    """Each step's verified claims: for a searching step, the claims backed by a source
    its queries found; for a dependent step, its analysis claims."""
    claims = list(claims)
    out: dict[str, list[Claim]] = {s.id: [] for s in plan.sub_questions}
    for step in plan.sub_questions:
        if step.kind is StepKind.DEPENDENT:
            out[step.id] = [c for c in analysis if c.id.startswith(f"{step.id}.a")]
            continue
        asked = set(step.searched)
        if not asked:
            continue
        found = {i for i, s in enumerate(scored) if asked.intersection(s.found_by)}
        out[step.id] = [c for c in claims if found.intersection(c.supporting_indices)]
    return out


def ready_steps(plan: Plan, kind: StepKind, have: Mapping[str, Sequence[Claim]]) -> list[SubQuestion]:
    """Steps of ``kind`` not yet run whose every dependency has claims, in an order
    that puts each after its dependencies."""
    return [s for s in topological_order(plan.sub_questions)
            if s.kind is kind and s.ran_in_iteration is None and all(have.get(d) for d in s.depends_on)]


def mark_ran(plan: Plan, step_ids: Iterable[str], iteration: int,
             searched: Mapping[str, Sequence[str]] | None = None) -> Plan:
    """The plan with those steps marked as run in ``iteration`` (appended to the step
    order) and, for searching steps, the query texts they ran."""
    ids = list(dict.fromkeys(step_ids))
    searched = searched or {}
    steps = [s.model_copy(update={
        "ran_in_iteration": iteration,
        "searched": list(dict.fromkeys([*s.searched, *searched.get(s.id, ())])),
    }) if s.id in ids else s for s in plan.sub_questions]
    order = [*plan.step_order, *(i for i in ids if i not in plan.step_order)]
    return plan.model_copy(update={"sub_questions": steps, "step_order": order})
