"""The research domain: what a job is and what it has learnt, as plain data and pure rules.

The job envelope and its models (``envelope``), the job events (``events``), the research
memory (``memory``), the plan's step graph (``steps``), the plan as a user reviews and
edits it (``plan_review``), claims' coverage and the job's
confidence (``claims``), canonical text, hashing and terms (``text``), evidence locators
and finding a quote in its text (``locators``, ``relocate``) and the local corpora as
their manifests describe them (``corpora``).

May import ``shared.platform`` and ``shared.subjects``; never the model layer, the stores
or the runtime, so the domain can be read and tested without NATS or a model.
"""
