"""Request classification: tokens, complexity and sensitivity."""
