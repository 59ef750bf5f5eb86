"""Several classes under per-class recall requirements (issue 14).

The data flow mirrors the binary CSVM's, one module per step:

* :mod:`~csvm_stats.multiclass.problem` - the multiclass CSVM as one more
  :class:`~csvm_stats.optimization.problem.MIQP` for the shared solver layer, with its
  proven big-M constants;
* :mod:`~csvm_stats.multiclass.warmstart` - one-vs-rest / Crammer-Singer start
  with per-class offsets shifted until the required anchor counts hold;
* :mod:`~csvm_stats.multiclass.engine` - the array-level fit;
* :mod:`~csvm_stats.multiclass.certification` - per-class recall bounds,
  the joint statement and guarantee mode;
* :mod:`~csvm_stats.multiclass.probability` - one-vs-rest Venn-Abers
  probabilities of the class margins;
* :mod:`~csvm_stats.multiclass.model` and :mod:`~csvm_stats.multiclass.results`
  - ``CSVM.from_formula("type ~ .", data, recall_min={...}).fit()`` and its results.
"""
