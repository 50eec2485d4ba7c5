"""HTTP edge: OpenAI-compatible routes, admin, health, error rendering."""
