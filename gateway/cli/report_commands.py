"""`gateway report`: cost, economics, savings and audit reports from the audit tables."""

from __future__ import annotations

import click


@click.group()
def report() -> None:
    """Reports over the audit log: as a table, CSV or JSON (and an HTML page)."""
