"""Formula and data -> design matrices, labels, splits, scaling and parameter checks."""
