"""Policy replay: recorded requests re-decided under another policy or router, and what would
change."""
