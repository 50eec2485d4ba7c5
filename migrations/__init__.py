"""Alembic migrations; shipped inside the package as gateway.migrations."""
