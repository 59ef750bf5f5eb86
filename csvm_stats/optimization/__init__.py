"""The CSVM as one solver-neutral optimisation problem, its bounds, warm start and solver backends."""
