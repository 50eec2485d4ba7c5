"""Self-hosted capacity as it was paid for: the deployments each policy declared (spans of
GPU-hours) and the GPU telemetry per deployment and minute."""
