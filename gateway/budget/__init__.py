"""Pricing in integer micro-USD and budget reservations."""
