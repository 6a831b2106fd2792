"""Which kept pages link where: a page that every kept page linking to it stopped linking to.

A continuous crawl sees a kept page's links at each fetch that gets its body.  :class:`InLinks`
keeps each such page's out-links as 64-bit fingerprints and, for every URL linked to, how many
kept pages link to it now.  When a page's links change, the URLs whose count falls to nothing
are the ones that every kept page that linked to them has stopped linking to since: the
schedule declares such a kept page gone (:meth:`RevisitSchedule.linked
<focuscrawl.core.refresh.schedule.RevisitSchedule.linked>`).  A URL no kept page ever linked to
(a seed, a redirect's target) has no count and is never found so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from focuscrawl.core.fingerprints import fingerprint

#: a page's out-links: the sorted fingerprints of the URLs it links to (itself left out)
Links = tuple[int, ...]


def link_keys(targets: Iterable[str], source: str) -> Links:
    """The out-links of ``source`` to ``targets`` (canonical URLs), as :class:`InLinks` keeps
    them."""
    own = fingerprint(source)
    return tuple(sorted({fingerprint(t) for t in targets} - {own}))


class InLinks:
    """How many kept pages link to each URL now (by fingerprint)."""

    __slots__ = ("_count",)

    def __init__(self) -> None:
        self._count: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._count)

    def count(self, url: str) -> int:
        return self._count.get(fingerprint(url), 0)

    def change(self, old: Sequence[int], new: Sequence[int]) -> tuple[list[int], list[int]]:
        """A kept page's out-links went from ``old`` to ``new`` (each sorted): the URLs no kept
        page links to any more, and the URLs linked to again after none did."""
        count = self._count
        dropped, relinked = [], []
        gone, added = set(old).difference(new), set(new).difference(old)
        for key in gone:
            n = count.get(key, 0) - 1
            if n > 0:
                count[key] = n
            else:
                count.pop(key, None)
                dropped.append(key)
        for key in added:
            n = count.get(key, 0)
            count[key] = n + 1
            if n == 0:
                relinked.append(key)
        return dropped, relinked
