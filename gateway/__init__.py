"""Multi-model LLM routing gateway."""
