"""Per-request records, written in batches off the request path."""
