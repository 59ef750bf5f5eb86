"""Summary tables and plots of fitted results."""
