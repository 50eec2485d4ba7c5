"""Routing policies: YAML schema, compiler, decide(), and the hot-reloading store."""
