"""Entry points for other tools: scikit-learn, the command line, model files, R."""
