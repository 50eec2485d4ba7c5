"""Measuring the classifiers and routers: routing curves, threshold calibration, sensitivity
scores and scan latency."""
