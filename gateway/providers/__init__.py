"""Upstream API adapters: each speaks one provider's wire format and returns OpenAI shapes."""
