"""The model layer: one interface for every stage's model work.

``engine`` asks a provider for structured output or text within a job's budget and counts
its usage; ``providers`` speak to Anthropic and to OpenAI-compatible servers; ``prompting``
fences untrusted text inside prompts; ``council`` asks further models to review a plan
or the findings; ``context`` knows each model's context window and packs prompts to fit
it; ``limits`` holds the per-provider settings (window, calls in flight, time limit).

May import ``shared.platform`` and ``shared.research`` (a model call is charged to a job).
"""
