"""Reports over the audit tables: cost, economics, savings and the audit rows themselves,
rendered as a table, CSV or JSON for the CLI and the HTTP API (and as an HTML page)."""
