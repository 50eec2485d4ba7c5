"""Wire-format translation between the gateway's internal format (OpenAI chat completions) and
the others it speaks: pure functions and per-stream objects, no I/O, shared by the front doors
(gateway/api) and the provider adapters (gateway/providers). See anthropic.py."""
