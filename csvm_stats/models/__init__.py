"""The binary CSVM: array core + formula front end, fitted state, results and tuning."""
