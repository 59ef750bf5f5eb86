"""The order R gives text levels, and warnings where Python's default order would fit another model.

Python (and formulaic, statsmodels, pandas) sorts text by code point:
capitals before small letters, and accented letters after ``z``
(``"Yes" < "no"``, ``"A" < "a"``, ``"hiver" < "ÉTÉ"``). R's ``sort`` and
``factor`` order text by the locale's collation (ICU on Debian's R, even in
the ``C.UTF-8`` locale): letters first compared without case and accents,
then accents, then case with small letters first (``"no" < "Yes"``,
``"a" < "A"``, ``"ÉTÉ" < "hiver"``). The order decides a binary response's
default positive class (the second level) and a text predictor's baseline
(the first level), and a penalised model depends on the baseline, so the same
call can fit different models in R and Python. :func:`r_collation_key`
approximates R's order (exact for letters, digits and accents; punctuation
may sort differently) so that the two cases warn.

>>> sorted(["Yes", "no"]), sorted(["Yes", "no"], key=r_collation_key)
(['Yes', 'no'], ['no', 'Yes'])
>>> sorted(["A", "a", "ÉTÉ", "hiver", "b"], key=r_collation_key)
['a', 'A', 'b', 'ÉTÉ', 'hiver']
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def r_collation_key(text: str) -> tuple:
    """A sort key ordering text as R's ICU collation does: base letters, then accents, then case (small first)."""
    decomposed = unicodedata.normalize("NFD", text)
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    accents = tuple(unicodedata.combining(c) for c in decomposed)
    return base.casefold(), accents, tuple(not c.islower() for c in base), text


def r_level_order(levels: Iterable[str]) -> list[str]:
    """``levels`` in R's order (:func:`r_collation_key`)."""
    return sorted(levels, key=r_collation_key)
