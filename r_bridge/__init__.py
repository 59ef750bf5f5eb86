"""Bridge between R and csvm-stats.

Python side: R data sets and R data files as pandas objects
(:func:`load_dataset`, :func:`load_rdata`, :func:`srbct`) and fitted models
as R objects (:func:`to_r`, :func:`save_rds`). The R package ``csvmstats``
in this folder is the R side. rpy2 is needed only for what runs R; files are
read without R through the pure-Python ``rdata`` package.
"""

from r_bridge.datasets import available_datasets, load_dataset, load_rdata, load_rds
from r_bridge.rds_reader import ReadLimits, RFormatError
from r_bridge.export import save_rds, to_r
from r_bridge.rsession import RUnavailableError, r_available
from r_bridge.srbct_data import srbct, srbct_genes

__all__ = [
    "RFormatError",
    "RUnavailableError",
    "ReadLimits",
    "available_datasets",
    "load_dataset",
    "load_rdata",
    "load_rds",
    "r_available",
    "save_rds",
    "srbct",
    "srbct_genes",
    "to_r",
]
