"""The platform: what any Python service needs, knowing nothing of research.

The error hierarchy (``errors``), one log format (``logs``), Prometheus metrics
(``metrics``), dates from the outside world (``dates``), the local nats-server and
PostgreSQL (``servers``), child processes that die with their parent (``lifeline``) and
the supervisor's status file (``supervision``).

Imports nothing else from ``shared``: it is the bottom layer.
"""
