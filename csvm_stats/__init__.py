"""csvm-stats: constrained support vector machines with rate guarantees.

The data flow is formula -> design -> optimisation problem -> solver backend
-> results -> summary; each step has its own module.
"""

__version__ = "0.1.0"
