"""The model layer: one interface for every stage's model work.

``engine`` asks a provider for structured output or text within a job's budget and counts
its usage; ``providers`` speak to Anthropic and to OpenAI-compatible servers; ``prompting``
fences untrusted text inside prompts; ``council`` asks further models to review a plan
or the findings.

May import ``shared.platform`` and ``shared.research`` (a model call is charged to a job).
"""
