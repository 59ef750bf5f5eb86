"""Shared fixtures: the embedded Wisconsin data and the location of ../shared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def wisconsin() -> tuple[np.ndarray, np.ndarray]:
    """Standardised Wisconsin features and labels (+1 = benign, -1 = malignant)."""
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), np.where(y == 1, 1.0, -1.0)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"the shared data folder {SHARED} is absent (it sits beside the repository)")
    return SHARED
