"""Exact arithmetic on formulas: rational functions of named symbols with rational
coefficients, so two formulas are compared as expressions, never at a few numbers.

A `Rational` is a numerator and a denominator polynomial over symbol names with
`Fraction` coefficients; `a == b` exactly when a.num·b.den == b.num·a.den as
polynomials. Nothing is simplified and nothing is guessed. A function of a formula that is
not a rational function (`exp(x)`, `x ** 0.5`) is an opaque symbol named after its
argument's exact form, so the same function of the same formula is the same symbol.

Every operation is bounded before its work: at most `MAX_TERMS` terms a polynomial,
exponents up to `MAX_EXPONENT`, coefficients up to `MAX_BITS` bits, so one operation costs
a bounded amount and a formula's cost is linear in its length. Past a bound: `TooLarge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

MAX_TERMS: Final = 300
"""Largest polynomial (terms) a formula may expand to."""
MAX_EXPONENT: Final = 12
MAX_BITS: Final = 4096
"""Largest numerator or denominator of a coefficient, in bits."""

Monomial = tuple[tuple[str, int], ...]
"""Symbol names with their powers, sorted by name; () is the constant term."""
Poly = Mapping[Monomial, Fraction]


class TooLarge(Exception):
    """The formula expands past the bounds: it cannot be decided exactly here."""


def _checked(poly: dict[Monomial, Fraction]) -> dict[Monomial, Fraction]:
    if len(poly) > MAX_TERMS:
        raise TooLarge("the formula expands to too many terms")
    for c in poly.values():
        if c.numerator.bit_length() > MAX_BITS or c.denominator.bit_length() > MAX_BITS:
            raise TooLarge("a number in the formula is too large")
    return poly


def _accumulate(out: dict[Monomial, Fraction], m: Monomial, c: Fraction) -> None:
    """Add c·m to `out`, leaving no zero term."""
    total = out.get(m, Fraction(0)) + c
    if total:
        out[m] = total
    else:
        out.pop(m, None)


def _add(a: Poly, b: Poly, sign: int = 1) -> dict[Monomial, Fraction]:
    out = dict(a)
    for m, c in b.items():
        _accumulate(out, m, sign * c)
    return _checked(out)


def _times_monomial(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for name, k in b:
        powers[name] = powers.get(name, 0) + k
    return tuple(sorted((n, k) for n, k in powers.items() if k))


def _mul(a: Poly, b: Poly) -> dict[Monomial, Fraction]:
    if len(a) * len(b) > MAX_TERMS * 8:
        raise TooLarge("the formula expands to too many terms")
    out: dict[Monomial, Fraction] = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            _accumulate(out, _times_monomial(ma, mb), ca * cb)
    return _checked(out)


def _scaled(a: Poly, c: Fraction) -> dict[Monomial, Fraction]:
    return _checked({m: v * c for m, v in a.items()} if c else {})


def _constant(a: Poly) -> Fraction | None:
    if not a:
        return Fraction(0)
    if len(a) == 1 and () in a:
        return a[()]
    return None


def _at(a: Poly, point: Mapping[str, Fraction]) -> Fraction:
    total = Fraction(0)
    for m, c in a.items():
        term = c
        for name, k in m:
            term *= point[name] ** k
        total += term
    return total


def _key(a: Poly) -> str:
    return "+".join(
        f"{c}" + "".join(f"*{n}^{k}" for n, k in m) for m, c in sorted(a.items(), key=repr)
    )


@dataclass(frozen=True)
class Rational:
    """num / den, two polynomials; den is never the zero polynomial."""

    num: Poly
    den: Poly

    @staticmethod
    def number(value: Fraction | int) -> Rational:
        v = Fraction(value)
        return Rational({(): v} if v else {}, {(): Fraction(1)})

    @staticmethod
    def symbol(name: str) -> Rational:
        return Rational({((name, 1),): Fraction(1)}, {(): Fraction(1)})

    # --- arithmetic ------------------------------------------------------------------

    def __add__(self, other: Rational) -> Rational:
        if self.den == other.den:
            return Rational(_add(self.num, other.num), self.den)
        return Rational(
            _add(_mul(self.num, other.den), _mul(other.num, self.den)),
            _mul(self.den, other.den),
        )

    def __sub__(self, other: Rational) -> Rational:
        return self + (-other)

    def __neg__(self) -> Rational:
        return Rational(_scaled(self.num, Fraction(-1)), self.den)

    def __mul__(self, other: Rational) -> Rational:
        a, b = self.constant(), other.constant()
        if a is not None:
            return Rational(_scaled(other.num, a), other.den)
        if b is not None:
            return Rational(_scaled(self.num, b), self.den)
        return Rational(_mul(self.num, other.num), _mul(self.den, other.den))

    def __truediv__(self, other: Rational) -> Rational:
        if not other.num:
            raise ZeroDivisionError("division by a formula that is 0")
        b = other.constant()
        if b is not None:
            return Rational(_scaled(self.num, 1 / b), self.den)
        return Rational(_mul(self.num, other.den), _mul(self.den, other.num))

    def power(self, exponent: int) -> Rational:
        if abs(exponent) > MAX_EXPONENT:
            raise TooLarge("an exponent is too large")
        if exponent < 0:
            return Rational.number(1) / self.power(-exponent)
        result = Rational.number(1)
        for _ in range(exponent):
            result = result * self
        return result

    # --- questions -------------------------------------------------------------------

    def constant(self) -> Fraction | None:
        """The value when the formula is a number, else None."""
        top, bottom = _constant(self.num), _constant(self.den)
        if top is None or bottom is None:
            return None
        return top / bottom

    def symbols(self) -> set[str]:
        return {n for poly in (self.num, self.den) for m in poly for n, _ in m}

    def equals(self, other: Rational) -> bool:
        """True when the two are the same rational function."""
        return _mul(self.num, other.den) == _mul(other.num, self.den)

    def ratio(self, other: Rational) -> Fraction | None:
        """c when self = c·other as formulas (other not 0), else None."""
        if not other.num:
            return None
        mine, theirs = _mul(self.num, other.den), _mul(other.num, self.den)
        if not mine:
            return Fraction(0)
        monomial, coefficient = next(iter(theirs.items()))
        if monomial not in mine:
            return None
        c = mine[monomial] / coefficient
        return c if _scaled(theirs, c) == mine else None

    def at(self, point: Mapping[str, Fraction]) -> Fraction:
        """The exact value where each symbol has its value in `point`."""
        bottom = _at(self.den, point)
        if bottom == 0:
            raise ZeroDivisionError("the formula divides by 0 here")
        return _at(self.num, point) / bottom

    def key(self) -> str:
        """A text that is the same for the same num and den (an opaque symbol's name)."""
        return f"({_key(self.num)})/({_key(self.den)})"
