"""The gateway's own telemetry (emitted, not ingested): Prometheus metrics and traces."""
