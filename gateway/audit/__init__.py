"""The hash-chained audit logs: per-request records (written in batches off the request path,
through a journal and a spool, with their rollups) and the admin log, and verifying both."""
