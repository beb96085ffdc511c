"""The JetStream stores the stages share, and the declaration of every stream and bucket.

``topology`` declares streams, key-value buckets and object stores (idempotently, by every
process); ``kv`` is compare-and-set on one key; ``objects`` the hashed-text object store
both text buckets use: ``textstore`` (canonical source texts passed by key) and
``archive`` (the texts digests and reports quote, kept for verification);
``checkpoints`` keeps the envelope of a job's last stage boundary; ``control`` is the
gateway's cancel and expiry marks; ``spend`` a job's model spend across attempts.

May import ``shared.platform``, ``shared.subjects`` and ``shared.research``.
"""
