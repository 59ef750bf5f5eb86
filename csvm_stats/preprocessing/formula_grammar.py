r"""Our own formula grammar: formula text -> a checked structure, never evaluated.

A formula that arrives as data (the command line, a model file, any string
read from outside) is not handed to formulaic as text, because formulaic, like
patsy and statsmodels, evaluates Python in formula terms (``{...}``,
``np.log(x)``, attribute chains). It is tokenised and parsed here by a
recursive-descent parser that knows only this grammar (precedence from low to
high, as in patsy and formulaic)::

    formula := response "~" sum
    sum     := ["+" | "-"] product (("+" | "-") product)*
    product := inter ("*" inter)*               a * b  =  a + b + a:b
    inter   := power (":" power)*               a:b    =  the interaction
    power   := atom ["**" INT]                  (a + b)**2 = a + b + a:b
    atom    := NAME | `any name` | "." | "0" | "1" | "C(" name ")" | "(" sum ")"

``NAME`` is a column name made of letters, digits, ``_`` and ``.`` (not
starting with a digit; R's ``Petal.Width`` is one name, never an attribute
look-up); any other column name is written between backquotes. ``.`` stands
for every column except the response; ``- 1``, ``+ 0`` and ``0 +`` drop the
intercept of the dummy coding, ``+ 1`` keeps it; ``C(name)`` codes a column
as a factor. Every name must be a column of the data. Anything else (calls,
braces, strings, numbers other than 0 and 1, ``I(...)``, attribute access)
is a :class:`~csvm_stats.exceptions.FormulaError` that says what is allowed.

The result, :class:`ParsedFormula`, is a set of terms, each a set of
factors, each a validated column name. :meth:`ParsedFormula.rhs` rebuilds a
formulaic formula from that structure only: every column name quoted in
backquotes (a look-up in formulaic, never evaluated) and ``C(...)`` around a
factor, so no character of the user's text reaches formulaic.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from csvm_stats.exceptions import FormulaError, FormulaLimitError

#: Longest formula text accepted, and deepest nesting of parentheses.
MAX_LENGTH = 10_000
MAX_DEPTH = 50
#: Largest exponent of ``(terms)**k``.
MAX_POWER = 10
#: Most terms a formula may expand to (or the number of columns plus one, when larger, so that ``y ~ .``
#: always works). Expansion is bounded before it is done: ``a*b*...*z`` (2^26 terms), ``(.)**10``
#: and long sums of products are refused as soon as a step could exceed the cap, with an
#: :class:`~csvm_stats.exceptions.FormulaLimitError`. For a formula you trust, raise it by assigning
#: ``csvm_stats.preprocessing.formula_grammar.MAX_TERMS`` (it is read at each parse).
MAX_TERMS = 10_000
ALLOWED = (
    "column names, `backquoted names`, '.', '+', '-', ':', '*', '**' with a whole number, "
    "parentheses, C(column), and 0 or 1 for the intercept"
)

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
    | (?P<quoted>`[^`\r\n]*`)
    | (?P<name>[^\W\d][\w.]*|\.[^\W\d][\w.]*)
    | (?P<number>\d+)
    | (?P<op>\*\*|[~+\-:*(),.])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # "name" (plain or quoted), "number", "op" or "end"
    text: str
    position: int


def _explain(char: str) -> str:
    if char in "{}":
        return "braces hold Python code in formulaic, which is never run here"
    if char in "'\"":
        return "string literals are not part of a formula"
    if char in "[]":
        return "indexing is not part of a formula"
    if char == "`":
        return "a backquoted name must be closed on the same line"
    return "it is not part of the formula grammar"


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``; an unknown character is a :class:`FormulaError` naming it and its position."""
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            char = text[position]
            raise FormulaError(
                f"cannot parse the formula {text!r}: {char!r} at position {position}, and {_explain(char)}; "
                f"formulas may contain only {ALLOWED}."
            )
        kind = match.lastgroup
        if kind == "quoted":
            name = match.group()[1:-1]
            if not name.strip():
                raise FormulaError(f"the formula {text!r} has an empty backquoted name at position {position}.")
            tokens.append(Token("name", name, position))
        elif kind != "space":
            tokens.append(Token(kind, match.group(), position))
        position = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


#: How a factor is coded: treatment contrasts against the first level (formulaic's default), or
#: ``"poly"``, orthogonal polynomial contrasts over equally spaced levels (R's ``contr.poly``).
CONTRASTS = ("treatment", "poly")


_PLAIN_NAME = re.compile(r"[^\W\d][\w.]*")


def formula_name(name: str) -> str:
    """``name`` as a formula writes it: a ``NAME`` plain (letters, digits, ``_``, ``.``, not starting with a
    digit), any other name between backquotes."""
    return name if _PLAIN_NAME.fullmatch(name) else f"`{name}`"


_CODING_NAMES = ("C", "contr")  # names that formulaic's C(column, contr.poly) reads as its own


@dataclass(frozen=True)
class Factor:
    """One column, used as it is or (``categorical``) coded as a factor by ``C(column)``.

    ``contrasts="poly"`` (categorical factors only) codes the factor with
    formulaic's ``contr.poly``: column k of the coding matrix is the
    orthonormal polynomial of degree k in the level scores 1..L, the same
    basis as R's ``contr.poly(L)`` (Gram-Schmidt of 1, s, s^2, ... with a
    positive leading coefficient); its design columns are named
    ``column[.L]``, ``column[.Q]``, ``column[.C]``, ``column[^4]``, ...
    """

    column: str
    categorical: bool = False
    contrasts: str = "treatment"

    @property
    def expr(self) -> str:
        """The name formulaic gives this factor (its encoder-state key and column-name stem)."""
        return self.formulaic() if self.categorical else self.column

    @property
    def stem(self) -> str:
        """The stem of this factor's design column names (the column itself for polynomial coding)."""
        return self.column if self.contrasts == "poly" else self.expr

    def formulaic(self) -> str:
        """This factor in formulaic's syntax, built from the validated column name only.

        formulaic replaces a back-quoted name wherever its text occurs in the expression, so a column
        whose name occurs in ``contr.poly`` (``o``, ``t``, ``poly``, ...) is written unquoted there; a
        column named ``C`` (or ``contr``, with polynomial contrasts) would be read as the function or the
        contrasts and is refused.
        """
        if not self.categorical:
            return f"`{self.column}`"
        plain = self.column.isidentifier() and not keyword.iskeyword(self.column)
        if self.column == "C" or (self.column in _CODING_NAMES and self.contrasts == "poly"):
            raise FormulaError(
                f"the column {self.column!r} cannot be coded as a factor here: formulaic evaluates C(...) as Python "
                f"and would read {self.column!r} as part of the coding; rename the column."
            )
        if self.contrasts == "poly":
            quoted_clash = self.column in "C(, contr.poly)"
            return f"C({self.column}, contr.poly)" if plain and quoted_clash else f"C(`{self.column}`, contr.poly)"
        return f"C({self.column})" if plain else f"C(`{self.column}`)"


#: A term is the interaction of its factors, in the order they were written; () is the intercept.
Term = tuple[Factor, ...]


class _Terms:
    """An ordered set of terms (order of first appearance; a:b and b:a are one term), of at most ``limit``."""

    def __init__(self, terms: Iterable[Term] = (), limit: int | None = None) -> None:
        self.items: dict[frozenset[Factor], Term] = {}
        self.limit = limit
        for term in terms:
            self.items.setdefault(frozenset(term), term)
            if limit is not None and len(self.items) > limit:
                raise _too_many(limit, f"more than {limit}")

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, term: Term) -> bool:
        return frozenset(term) in self.items

    def __add__(self, other: _Terms) -> _Terms:
        return _Terms([*self.items.values(), *other.items.values()], self.limit or other.limit)

    def __sub__(self, other: _Terms) -> _Terms:
        return _Terms((t for key, t in self.items.items() if key not in other.items), self.limit)

    def interact(self, other: _Terms) -> _Terms:
        limit = self.limit or other.limit
        bound = len(self) * len(other)
        if limit is not None and bound > limit:
            raise _too_many(limit, f"up to {bound}")
        return _Terms(
            (a + tuple(f for f in b if f not in a) for a in self.items.values() for b in other.items.values()), limit
        )


def _too_many(limit: int, count: str) -> FormulaLimitError:
    return FormulaLimitError(
        f"the formula would expand to {count} terms, more than the cap of {limit} "
        "(csvm_stats.preprocessing.formula_grammar.MAX_TERMS, or the number of columns + 1); products such as "
        "a*b*c*... and powers (.)**k multiply terms. Write the interactions you need explicitly, or, for a "
        "formula you trust, raise formula_grammar.MAX_TERMS."
    )


_INTERCEPT: Term = ()
_ZERO = object()  # the literal 0: only meaningful as "+ 0" / "- 0"


@dataclass(frozen=True)
class ParsedFormula:
    """A formula as checked structure: the response, the terms (no intercept) and the intercept flag."""

    text: str
    response: str
    terms: tuple[Term, ...]
    intercept: bool

    @property
    def columns(self) -> tuple[str, ...]:
        """The data columns the right-hand side uses, in order of first use."""
        return tuple(dict.fromkeys(f.column for term in self.terms for f in term))

    def rhs(self) -> str:
        """The right-hand side for formulaic, rebuilt from the structure (quoted names, our operators)."""
        parts = ["1" if self.intercept else "0"]
        parts += [":".join(factor.formulaic() for factor in term) for term in self.terms]
        return " + ".join(parts)

    def rhs_terms(self) -> list[str]:
        """The right-hand side for formulaic as a list of term strings (``"1"`` for the intercept).

        formulaic parses a list term by term; the text of :meth:`rhs` is parsed as one sum, whose
        ``+`` copies the growing term set at each step (quadratic in the number of terms: 2.7 s for
        5000 columns, against 0.3 s for the list). Build the formula with ``Formula(rhs_terms())``
        before handing it to ``model_matrix``: given the list, ``model_matrix`` parses each term with
        the data as context, whose size formulaic counts column by column for every term (quadratic
        again).
        """
        parts = ["1"] if self.intercept else []
        return parts + [":".join(factor.formulaic() for factor in term) for term in self.terms]

    def generated_expressions(self) -> frozenset[str]:
        """The ``C(...)`` expressions :meth:`rhs` wrote (the only non-look-up factors formulaic may see)."""
        return frozenset(f.formulaic() for term in self.terms for f in term if f.categorical)

    def with_polynomial(self, columns: Iterable[str]) -> ParsedFormula:
        """This formula with every factor on one of ``columns`` coded by polynomial contrasts."""
        chosen = set(columns)

        def coded(factor: Factor) -> Factor:
            return Factor(factor.column, True, "poly") if factor.column in chosen else factor

        return replace(self, terms=tuple(tuple(coded(f) for f in term) for term in self.terms))

    def design_name(self, name: str) -> str:
        """A design column name as shown to users: ``C(`x`, contr.poly)[.L]`` becomes ``x[.L]``."""
        return self.design_names([name])[0]

    def design_names(self, names: Iterable[str]) -> list[str]:
        """:meth:`design_name` of each of ``names``; the polynomial factors are collected once, not per name."""
        poly = list(dict.fromkeys(f for term in self.terms for f in term if f.contrasts == "poly"))
        if not poly:
            return list(names)
        renamed = []
        for name in names:
            for factor in poly:
                name = name.replace(factor.expr, factor.stem)
            renamed.append(name)
        return renamed


class _Parser:
    def __init__(self, text: str, columns: Sequence[str], response: str | None) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.columns = list(columns)
        self.known = set(self.columns)  # membership in O(1): a list look-up per name is O(p^2) for long formulas
        self.response = response
        self.depth = 0
        self.limit = max(MAX_TERMS, len(self.columns) + 1)

    def terms(self, items: Iterable[Term] = ()) -> _Terms:
        return _Terms(items, self.limit)

    # -- token helpers
    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def _take(self) -> Token:
        token = self.current
        self.index += 1
        return token

    def _at(self, text: str) -> bool:
        return self.current.kind == "op" and self.current.text == text

    def _error(self, what: str, token: Token | None = None) -> FormulaError:
        token = token or self.current
        found = "the end" if token.kind == "end" else repr(token.text)
        return FormulaError(
            f"cannot parse the formula {self.text!r}: {what} at position {token.position} (found {found}); "
            f"formulas may contain only {ALLOWED}."
        )

    def _expect(self, text: str, what: str) -> None:
        if not self._at(text):
            raise self._error(what)
        self._take()

    # -- names
    def column(self, token: Token) -> str:
        name = token.text
        if name not in self.known:
            raise FormulaError(
                f"the formula {self.text!r} names the column {name!r}, which is not in the data "
                f"(columns: {self.columns[:12]}{' ...' if len(self.columns) > 12 else ''})."
            )
        if name == self.response:
            raise FormulaError(f"the formula {self.text!r} uses the response {name!r} as a predictor.")
        return name

    # -- grammar
    def formula(self) -> tuple[str, _Terms]:
        token = self._take()
        if token.kind != "name":
            raise self._error("the left-hand side must be one column name (use backquotes for unusual names)", token)
        response = token.text
        if not self._at("~"):
            raise self._error(
                "the left-hand side must be one column name followed by '~' (recode the response in the data "
                "frame instead of in the formula)"
            )
        self._take()
        self.response = response
        terms = self.sum(outer=True)
        if self.current.kind != "end":
            raise self._error("unexpected text")
        return response, terms

    def sum(self, outer: bool = False) -> _Terms:
        terms = self.terms([_INTERCEPT]) if outer else self.terms()
        sign = "+"
        if self._at("+") or self._at("-"):
            sign = self._take().text
        while True:
            operand = self.product()
            if operand is _ZERO:
                operand, sign = self.terms([_INTERCEPT]), "-" if sign == "+" else "+"
            terms = terms + operand if sign == "+" else terms - operand
            if not (self._at("+") or self._at("-")):
                return terms
            sign = self._take().text

    def product(self) -> _Terms | object:
        left = self.inter()
        while self._at("*"):
            self._take()
            right = self._group(self.inter(), "'*'")
            left = self._group(left, "'*'")
            left = left + right + left.interact(right)
        return left

    def inter(self) -> _Terms | object:
        left = self.power()
        while self._at(":"):
            self._take()
            left = self._group(left, "':'").interact(self._group(self.power(), "':'"))
        return left

    def power(self) -> _Terms | object:
        base = self.atom()
        if not self._at("**"):
            return base
        self._take()
        token = self._take()
        if token.kind != "number" or not 1 <= int(token.text) <= MAX_POWER:
            raise self._error(f"'**' needs a whole number from 1 to {MAX_POWER}", token)
        base = self._group(base, "'**'")
        result = base
        for _ in range(int(token.text) - 1):
            result = result + result.interact(base)
        return result

    def _group(self, value: _Terms | object, operator: str) -> _Terms:
        if value is _ZERO:
            raise self._error(f"0 cannot be used with {operator}")
        return value  # type: ignore[return-value]

    def atom(self) -> _Terms | object:
        token = self._take()
        if token.kind == "number":
            if token.text == "1":
                return self.terms([_INTERCEPT])
            if token.text == "0":
                return _ZERO
            raise self._error("numbers other than 0 and 1 (the intercept) are not terms", token)
        if token.kind == "op" and token.text == ".":
            return self.terms((Factor(c),) for c in self.columns if c != self.response)
        if token.kind == "op" and token.text == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self._error(f"parentheses nested deeper than {MAX_DEPTH}", token)
            inner = self.sum()
            self._expect(")", "expected ')'")
            self.depth -= 1
            return inner
        if token.kind != "name":
            raise self._error("expected a column name, '.', a parenthesis or C(column)", token)
        if self._at("("):
            return self.call(token)
        return self.terms([(Factor(self.column(token)),)])

    def call(self, function: Token) -> _Terms:
        if function.text != "C":
            raise self._error(
                f"function calls such as {function.text}(...) are not allowed; only C(column) is. Compute "
                "transformed columns in the data frame (or, in Python code you trust, use "
                "CSVM.from_formula(..., safe=False))",
                function,
            )
        self._take()  # "("
        token = self._take()
        if token.kind != "name":
            raise self._error("C(...) takes exactly one column name", token)
        name = self.column(token)
        if unicodedata.normalize("NFKC", name) != name:
            raise FormulaError(
                f"C({name}) cannot be used: formulaic evaluates C(...) as Python, which reads the name as "
                f"{unicodedata.normalize('NFKC', name)!r} (Unicode NFKC). Make the column a pandas Categorical "
                "instead (categorical columns are coded as factors without C()), or rename it."
            )
        self._expect(")", "C(...) takes exactly one column name, then ')'")
        return self.terms([(Factor(name, categorical=True),)])


def parse_formula(text: str, columns: Sequence[str]) -> ParsedFormula:
    """Parse ``text`` against the data's ``columns`` (names as strings) into a :class:`ParsedFormula`.

    Raises :class:`FormulaError` when the text is not in the grammar, names a
    column that is not in ``columns``, or leaves no predictor.
    """
    if not isinstance(text, str):
        raise FormulaError(f"the formula must be a string 'response ~ terms', got {type(text).__name__}.")
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"the formula has {len(text)} characters; at most {MAX_LENGTH} are accepted.")
    if text.count("~") != 1:
        raise FormulaError(f"the formula must have the form 'response ~ terms', got {text!r}.")
    parser = _Parser(text, [str(c) for c in columns], None)
    response, terms = parser.formula()
    if response not in parser.columns:
        raise FormulaError(
            f"the formula's response {response!r} is not a column of the data (columns: {parser.columns[:12]})."
        )
    kept = tuple(t for t in terms.items.values() if t)
    for term in kept:
        for factor in term:
            if "`" in factor.column or "\n" in factor.column or "\r" in factor.column:
                raise FormulaError(
                    f"the column name {factor.column!r} contains a backquote or a line break and cannot be used "
                    "in a formula; rename the column."
                )
    if not kept:
        raise FormulaError(f"the formula {text!r} leaves no predictor columns.")
    return ParsedFormula(text, response, kept, _INTERCEPT in terms)


def response_of(text: str) -> str:
    """The response column of ``text`` (one name left of ``~``), without looking at any data."""
    if not isinstance(text, str) or text.count("~") != 1:
        raise FormulaError(f"the formula must have the form 'response ~ terms', got {text!r}.")
    tokens = tokenize(text.split("~", 1)[0])
    if len(tokens) != 2 or tokens[0].kind != "name":
        raise FormulaError(
            f"the left-hand side of {text!r} must be one column name (use backquotes for unusual names); "
            "recode the response in the data frame instead of in the formula."
        )
    return tokens[0].text
