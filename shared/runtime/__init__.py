"""The stage runtime: everything a stage service does around its own work.

``stage`` is the runner (consume, heartbeat, cancel, retry, fail, publish, count spend);
``routing`` the one table of where a job may go after each stage; ``publishing``
deterministic-id publishing through the broker; ``heartbeat`` keeps a command alive while
it runs; ``deadline`` turns the job's deadline into cuts the work obeys; ``faults`` the
drills' fault injection (``RESEARCH_CHAOS``).

The top layer of ``shared``: may import every other package.
"""
