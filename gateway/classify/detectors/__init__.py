"""Sensitive-data detectors. Each is a pure function of a prepared TextView returning spans
(offsets, type, category, confidence); none keeps or reports the matched values."""
