"""Live fleet state: backend health now, vLLM /metrics telemetry next."""
