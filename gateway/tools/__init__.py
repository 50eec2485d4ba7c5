"""Offline work that combines siblings: capacity planning."""
