"""Wire-format translation between the gateway's internal format (OpenAI chat completions) and
the others it speaks: pure functions and per-stream objects, no I/O, shared by the front doors
(gateway/api) and the provider adapters (gateway/providers). One entry module per format:
anthropic.py (Messages, both edges) and responses.py (the Responses front door); the front
doors' stream encoders share chat_stream_encoder.py's interface."""
