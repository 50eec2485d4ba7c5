"""Offline work that combines siblings, never loaded on the request path: policy replay,
explain, training and evaluation of the classifiers and routers, and capacity planning."""
