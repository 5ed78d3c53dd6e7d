"""The bound on n-gram orders: orders above the longest text have no n-gram.

A text of L tokens has no n-gram of an order above L, so every lexical metric computes orders
only up to the longest text's token count and gives the orders above it their no-n-gram value
in O(1), whatever the order asked for (``n=10**9`` costs what ``n=L`` costs). A function that
lists one entry per order (``distinct_1 .. distinct_max_n``) would allocate the listing itself,
so it refuses an order above ``max(longest, its default order)`` with a ValueError naming the
argument and the bound (the default order is always accepted, so the defaults work on a corpus
of one-word responses).
"""

from __future__ import annotations

from dialeval.validation import ArgumentError


def computed_orders(max_n: int, longest: int) -> int:
    """The highest order worth computing: ``min(max_n, longest)`` (orders above have no n-gram)."""
    return min(max_n, max(longest, 0))


def check_listed_orders(
    argument: str, max_n: int, longest: int, default: int, measure: str = "token count"
) -> None:
    """Refuse listing ``max_n`` orders when ``max_n > max(longest, default)``, before any
    allocation.

    ``longest``: the longest response's ``measure`` (its token count, or any upper bound of it,
    such as its length in characters)."""
    bound = max(longest, default)
    if max_n > bound:
        raise ArgumentError(
            argument,
            f"({max_n}) exceeds {bound}, the longest response's {measure} ({longest}) or the "
            f"default order ({default}) if larger: orders above the longest response have no "
            "n-gram",
        )
