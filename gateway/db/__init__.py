"""Database engine, tables and migrations runner."""
