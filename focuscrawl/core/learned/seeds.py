"""Whether the seeds are examples of the topic when the user did not say (no Scrapy).

Seeds on the topic and seeds near it call for different orders (:func:`.defaults.
examples_defaults`).  Left unsaid (``examples`` None), the order starts as from seeds that are
not examples, which orders exactly as before, and decides once the seeds have reported (or
``every`` pages were fetched, whichever comes first): they are examples if at least half of
them match the keywords, as pages on the topic do and pages near it seldom do.  Until then it
records what the examples' defaults would need from the first pages (each link's place among
its parent's, each parent's area), so nothing of them is lost if it switches.
"""

from __future__ import annotations

from typing import Any

from .defaults import DENSE_PRIOR, examples_defaults
from .profile import PageDigest

HUB = len(DENSE_PRIOR) - 2  # the hub evidence's column among the dense weights


class SeedVerdict:
    """The seeds' keyword matches so far, and the verdict: ``examples`` is None until decided."""

    def __init__(self, examples: bool | None, relevant_score: float) -> None:
        self.examples = examples
        self.told = examples is not None  # the user said; nothing to decide
        self.relevant_score = relevant_score
        self.queued = 0  # seeds queued
        self.reported = 0  # seeds fetched (or failed)
        self.relevant = 0  # ... whose page matched the keywords
        # the seeds' pages the profile did not take (they did not match the keywords enough),
        # for it should the seeds turn out to be examples
        self.digests: list[PageDigest] = []

    @property
    def pending(self) -> bool:
        return self.examples is None

    def seed_queued(self) -> None:
        if self.pending:
            self.queued += 1

    def seed_crawled(self, score: float, digest: PageDigest | None, fed: bool) -> None:
        """A seed's page (``score``: its keyword cosine; ``fed``: the profile took it)."""
        if not self.pending:
            return
        self.reported += 1
        if self.relevant_score and score >= self.relevant_score:
            self.relevant += 1
        if digest is not None and not fed:
            self.digests.append(digest)

    def due(self, pages: int, every: int) -> bool:
        """Whether to decide now: every seed queued reported, or ``every`` pages fetched (a seed
        refused or redirected never reports)."""
        return self.pending and (self.reported >= self.queued or pages >= every)

    def verdict(self) -> bool:
        return self.relevant > 0 and 2 * self.relevant >= self.reported

    def snapshot(self) -> dict[str, Any]:
        return {"examples": self.examples, "queued": self.queued, "reported": self.reported,
                "relevant": self.relevant, "digests": list(self.digests)}

    def restore(self, state: dict[str, Any]) -> None:
        """A snapshot's counts and verdict (a told one stays what the user says)."""
        if self.told:
            return
        self.examples = state["examples"]
        self.queued, self.reported = state["queued"], state["reported"]
        self.relevant, self.digests = state["relevant"], list(state["digests"])


def starting_options(examples: bool | None, given: dict[str, Any]
                     ) -> tuple[dict[str, Any], frozenset[str]]:
    """The options as the order starts: those ``given``, the others their defaults for seeds
    that are examples or not (not, while the verdict is to come); and the names left unset."""
    defaults = examples_defaults(bool(examples))
    options = {name: defaults[name] if value is None else value for name, value in given.items()}
    return options, frozenset(name for name, value in given.items() if value is None)


def settle(order: Any) -> None:
    """The verdict: as examples, the options left unset take the examples' defaults and the
    seeds' pages grow the topic profile."""
    seeds = order.seeds
    seeds.examples = seeds.verdict()
    if seeds.examples:
        for digest in seeds.digests:
            order.scorer.profile.feedback(digest, 1.0)
    seeds.digests = []
    apply_examples_defaults(order, seeds.examples, order.auto_options)


def apply_examples_defaults(order: Any, examples: bool, auto: frozenset[str],
                            restoring: bool = False) -> None:
    """Give the options the user left unset (``auto``) their defaults for seeds that are (or
    are not) examples (``order``: a :class:`.order.Learned`, untyped here as in :mod:`.state`,
    which imports this module).  ``restoring``: the model's weights come from the snapshot."""
    values = examples_defaults(examples)
    scorer, trainer = order.scorer, order.trainer
    if "explore" in auto:
        scorer.explore = values["explore"]
    if "profile_score" in auto:
        trainer.profile_score = values["profile_score"]
    if "explore_hosts" in auto:
        order.bandit.share = values["explore_hosts"]
    if "sibling_window" in auto:
        order.window = trainer.window = int(values["sibling_window"])
    if "hub" in auto:
        # the column was 0 until now, so its weight still is its prior: move both
        scorer.hub = values["hub"]
        scorer.model.v0[HUB] = values["hub"]
        if not restoring:
            scorer.model.v[HUB] = values["hub"]
    scorer.hub_areas = bool(scorer.hub)
    order.keeps_places = bool(order.window)
