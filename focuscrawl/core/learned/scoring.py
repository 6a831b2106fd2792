"""The learned order's link values: features of a link, the model over them, and what the crawl
knows about hosts, directories and parent pages (no Scrapy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .areas import AreaStats
from .defaults import (
    DENSE_PRIOR,
    KW_ANCHOR,
    KW_CONTEXT,
    PARENT,
    PARENT_EXPERT,
    PART_NAMES,
    PRIOR_BIAS,
    PROFILE_SCALES,
    SEED,
)
from .features import FeatureStore, LinkFeaturizer, directory_of
from .mixture import ParentMixture
from .model import LinkModel, sigmoid
from .profile import TopicProfile


class Scorer:
    """Turns links into feature rows and feature rows into values: P(relevant) from the model,
    with an exploration bonus on the logit for hosts and directories the crawl knows little
    about, and seeds first."""

    def __init__(self, keywords: Any, *, bits: int, explore: float, explore_split: float,
                 hub: float, sibling: float, parent_expert: bool = PARENT_EXPERT) -> None:
        self.explore = explore
        self.parent_expert = parent_expert  # off: the mixture neither learns nor mixes
        self.explore_split = explore_split
        self.hub = hub  # 0: the column stays 0, so the order is exactly as without it
        self.hub_areas = bool(hub)  # parents are areas (kept while ``hub`` may yet be set)
        self.profile = TopicProfile(keywords)
        self.featurizer = LinkFeaturizer(self.profile.topic.phrases, bits)
        self.store = FeatureStore(bits=bits)
        prior = list(DENSE_PRIOR)
        prior[-2], prior[-1] = hub, sibling
        self.model = LinkModel(self.featurizer.dim, prior, bias=PRIOR_BIAS)
        self.hosts = AreaStats()
        self.dirs = AreaStats()
        self.hubs = AreaStats()  # per parent page: how relevant its fetched children were
        #                          (only with ``hub_areas``: otherwise every link's area is 0)
        self.extra = self.featurizer.project(self.profile.weights, PROFILE_SCALES)
        self.mixture = ParentMixture()  # best-first's evidence, as far as it predicts better

    def project(self) -> None:
        """Project the (rebuilt or restored) topic profile onto the hashed words."""
        self.extra = self.featurizer.project(self.profile.weights, PROFILE_SCALES)

    def add(self, url: str, host: str, *, anchor: str, context: str, parent: str | None,
            parent_host: str | None, chrome: bool, parent_relevance: float,
            grandparent: float, depth: int) -> int:
        """A link's feature row, stored: its slot."""
        cols, vals, dense = self.featurizer.link(
            url, host, anchor=anchor, context=context, parent_host=parent_host,
            seed=parent is None, chrome=chrome, parent=parent_relevance,
            grandparent=grandparent, depth=depth,
        )
        # a parent page is an area of its own only where its hub evidence is weighed: one
        # per page fetched, ~50 bytes a page on a long crawl
        hub = self.hubs.id(parent or "") if self.hub_areas else 0
        return self.store.add(cols, vals, dense, self.hosts.id(host),
                              self.dirs.id(directory_of(url)), hub)

    def names_topic_anew(self, slot: int, anchor: str, context: object) -> bool:
        """Whether a link's ``anchor`` or ``context`` names a keyword where the link kept in
        ``slot`` did not: a URL's best words may come from any of its in-links (on docweb the
        words around a page's best in-link predict it as well as its best parent does)."""
        store = self.store
        topic = self.profile.topic  # mentions() is the featurizer's keyword test, prefiltered
        return (bool(anchor) and not store.dense_value(slot, KW_ANCHOR) and topic.mentions(anchor)
                or bool(context) and not store.dense_value(slot, KW_CONTEXT)
                and topic.mentions(str(context)))

    def dynamic(self, slots: np.ndarray) -> np.ndarray:
        areas = self.store.areas(slots)
        return np.column_stack([
            self.hosts.evidence(areas[:, 0]),
            self.dirs.evidence(areas[:, 1]),
            np.log(np.maximum(self.store.inlinks[slots], 1.0)),
            self.hubs.evidence(areas[:, 2]) if self.hub else np.zeros(len(slots)),
            self.store.near[slots].astype(np.float64),
        ])

    def bonus(self, slots: np.ndarray) -> np.ndarray:
        """The exploration bonus on the links' logits: ``explore`` x the UCB uncertainty of
        their host and directory, shared ``explore_split`` / the rest."""
        areas = self.store.areas(slots)
        return self.explore * (self.explore_split * self.hosts.uncertainty(areas[:, 0])
                               + (1 - self.explore_split) * self.dirs.uncertainty(areas[:, 1]))

    def dense(self, slots: np.ndarray, dynamic: np.ndarray,
              stored: np.ndarray | None = None) -> np.ndarray:
        """The links' dense columns: the stored ones (``stored``, if read already), then the
        dynamic ones (DENSE_PRIOR's)."""
        return np.hstack([self.store.dense(slots) if stored is None else stored, dynamic])

    def logits(self, slots: np.ndarray, dynamic: np.ndarray,
               stored: np.ndarray | None = None) -> np.ndarray:
        dense = self.dense(slots, dynamic, stored)
        hashed = self.store.dot(slots, self.model.w, self.extra)
        return self.model.logits(hashed, dense)

    def values(self, slots: np.ndarray) -> np.ndarray:
        """Priorities: P(relevant) (the learned model mixed with the parent-only expert) with
        an exploration bonus on the logit; seeds first."""
        stored = self.store.dense(slots)
        z = self.logits(slots, self.dynamic(slots), stored)
        if self.parent_expert:
            z = self.mixture.mix(z, stored[:, PARENT])
        if self.explore:
            z = z + self.bonus(slots)
        values = sigmoid(z)
        seeds = stored[:, SEED] > 0.0
        if seeds.any():
            values[seeds] += 1.0  # the user's own start pages come before any link
        return values

    def is_seed(self, slot: int) -> bool:
        return self.store.dense_value(slot, SEED) > 0.0

    def explain(self, slot: int) -> dict[str, float]:
        """The parts of a row's logit under today's model, each rounded to 3 places (see
        :meth:`Learned.explain`).  Read only."""
        slots = np.array([slot], dtype=np.int64)
        dense = self.dense(slots, self.dynamic(slots))[0]
        parts = {"bias": self.model.b}
        for name, x, weight in zip(PART_NAMES, dense.tolist(), self.model.v.tolist(),
                                   strict=True):
            if x * weight:
                parts[name] = x * weight
        parts["words"] = float(self.store.dot(slots, self.model.w)[0])
        parts["profile"] = float(self.store.dot(slots, self.extra)[0])
        z = sum(parts.values())
        mixed = (float(self.mixture.mix(np.array([z]), dense[PARENT:PARENT + 1])[0]) - z
                 if self.parent_expert else 0.0)
        if mixed:
            parts["mixture"] = mixed  # the parent-only expert's pull (0: none yet)
        if self.explore:
            parts["explore"] = float(self.bonus(slots)[0])
        return {name: round(float(value), 3) for name, value in parts.items()}
