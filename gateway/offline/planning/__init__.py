"""Capacity what-ifs on top of the shared sizing (gateway/capacity/): a model's config.json
read into a shape, and the GPUs a replayed policy would need."""
