"""The command line, ``deepresearch`` (``python -m services.cli``), and the supervisor
behind ``deepresearch up``.

``main`` parses the commands; ``jobs``, ``view`` and ``trace`` talk to a running
gateway and draw what it answers; ``config`` shows the settings; ``check`` runs the
report's checks on a sentence and its quotes; ``supervisor`` starts nats-server,
PostgreSQL and the six services and restarts a service that exits.

Unlike the services, this package may import any service: starting them is its job.
"""
