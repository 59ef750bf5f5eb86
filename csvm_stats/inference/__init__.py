"""Confidence margins, exact bounds and held-out certification of rates."""
