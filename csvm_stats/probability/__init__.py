"""Posterior probabilities: bootstrap ensembles (EBB/CEBB) and calibration."""
