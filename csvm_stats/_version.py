"""The package's version: one place that pyproject.toml, the model files, the CLI and the R API read."""

__version__ = "0.1.0"
