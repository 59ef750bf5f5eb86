"""Data sets: the shared real data sets and synthetic generators."""
