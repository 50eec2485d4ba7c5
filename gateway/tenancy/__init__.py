"""Tenants and API keys: key format and hashing, SQL, the cached authenticator."""
