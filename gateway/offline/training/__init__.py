"""Training the shipped classifiers and fitting routers to judged outcomes (scikit-learn and
scipy: the `train` extra)."""
