"""Upstream API adapters: each speaks one provider's wire format and returns OpenAI shapes.
registry.py builds one per provider kind (the kinds are declared in gateway/provider_kinds);
pure translation between wire formats lives in gateway/translate."""
