"""The gateway command-line interface."""
