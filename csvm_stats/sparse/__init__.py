"""Feature selection inside the CSVM: the L1 and cardinality routes, their results, path and stability."""
