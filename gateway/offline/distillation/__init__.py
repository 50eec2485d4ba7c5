"""Distilling the full MiniLM encoder (onnxruntime: the `encoder` extra) into the static table
the request path reads."""
