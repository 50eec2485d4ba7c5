"""The request path: the orchestrating service and the SSE relay."""
