"""The project's own library, in layers; each package may import only those below it.

    runtime        the stage runner: routing, publishing, heartbeats, deadline, faults
    stores         JetStream streams, buckets and object stores: topology, texts,
                   archive, checkpoints, control, spend
    settings       (module) every service's settings, on one base
    verification   does a statement rest on its quotes: grounding, meaning checks, judge
    llm            the model layer: engine, providers, prompting, council
    research       the domain: envelope, events, memory, steps, claims, text, locators
    subjects       (module) every stream, subject, durable and bucket name
    platform       errors, logs, metrics, dates, local servers, child processes

``stores`` does not import ``llm``, ``verification`` or ``settings``, and nothing but
``runtime`` imports ``runtime``. The services import only ``shared`` (never each other);
``services/cli`` starts them. ``tests/unit/test_service_isolation.py`` holds the rule.
"""
