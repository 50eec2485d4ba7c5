"""Security suite: admin auth, tenant isolation, hashed keys, no leaks, limits and CORS."""
