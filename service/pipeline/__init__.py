"""The per-run pipeline: admission, then the stages check → render → evaluate → finalize.

Each stage is small and idempotent and reaches a worker through one dispatcher protocol.

Embedded (SQLite, one process): the lease executor (:mod:`.executor`) claims runs from the
database. PostgreSQL: each stage is a procrastinate job (:mod:`.pgqueue`) run by
``regua worker`` (:mod:`.pgworker`). Rendering goes through a pool of sandboxed render workers
(:mod:`.render_client`); a fleet-wide slot table limits judge calls in flight (:mod:`.slots`).
"""
