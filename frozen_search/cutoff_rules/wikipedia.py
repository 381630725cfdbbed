"""Wikipedia's cutoff rule, as data (design.md, "Wikipedia").

Eligible: the page had a revision before ``T``. Displayed: the last revision before ``T`` (strictly: a revision
stamped exactly at ``T`` is not shown), rendered from that revision's own wikitext with templates stripped, never
expanded from today's templates. A redirect is followed as it stood at ``T``, to the target's own snapshot at ``T``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WikipediaRule:
    """The declarative rule: which date counts, and what is never displayed."""

    date_that_counts: str = "revision timestamp (valid_from), strictly before T"
    follow_redirects: int = 1
    templates: str = "stripped"
    never_displayed: tuple[str, ...] = ("current title of a later move", "templates as they are today",
                                        "action=parse output", "page views", "later revisions")


RULE = WikipediaRule()
