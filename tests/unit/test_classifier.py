"""The page classifier (focuscrawl.core.classifier): examples, self-training, persistence."""

from __future__ import annotations

import pickle
import random

from focuscrawl.core.classifier import PageClassifier
from focuscrawl.core.learned import PageDigest
from focuscrawl.core.learned.training import Trainer

ON = "orchid greenhouse humidity potting bark epiphyte roots bloom watering misting".split()
OFF = "football league referee goal striker penalty stadium transfer season midfield".split()
SHARED = "the page about this guide with more".split()


def page(rng: random.Random, vocab: list[str], n: int = 30) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for _ in range(n):
        term = rng.choice(vocab if rng.random() < 0.7 else SHARED)
        counts[term] = counts.get(term, 0) + 1
    return sorted(counts.items())


def classifier() -> PageClassifier:
    return PageClassifier(positive_score=0.1, negative_score=0.025, refit_every=5)


def test_no_probability_before_both_classes():
    c = classifier()
    rng = random.Random(1)
    c.add_example(c.features(page(rng, ON)), True)
    assert not c.fit() and c.probability(c.features(page(rng, ON))) is None
    c.add_example(c.features(page(rng, OFF)), False)
    assert c.fit()
    assert c.probability(c.features(page(rng, ON))) > c.probability(c.features(page(rng, OFF)))


def test_features_are_unit_length_and_stable():
    c = classifier()
    idx, val = c.features([("orchid", 3), ("bark", 1)])
    assert abs(float(val @ val) - 1.0) < 1e-9
    assert (classifier().features([("orchid", 3), ("bark", 1)])[0] == idx).all()


def test_self_training_from_keyword_scores_agrees_with_them():
    """No user example: pages confidently on (score >= 0.1) or off (< 0.025) train it; its
    labels agree with the keyword rule on pages it had not seen."""
    c = classifier()
    rng = random.Random(2)
    for i in range(200):
        on = i % 2 == 0
        p = c.observe(c.features(page(rng, ON if on else OFF)), 0.3 if on else 0.0)
        if i == 0:
            assert p is None
    assert c.fits >= 2 and c.agreement is not None and c.agreement > 0.9
    # a page between the thresholds joins no pool
    before = c.confident
    c.observe(c.features(page(rng, ON)), 0.05)
    assert c.confident == before


def test_user_examples_stay_when_the_pools_roll_over():
    c = PageClassifier(positive_score=0.1, negative_score=0.025, pool=10, refit_every=1)
    rng = random.Random(3)
    c.add_example(c.features(page(rng, ON)), True)
    c.add_example(c.features(page(rng, OFF)), False)
    for _ in range(50):
        c.observe(c.features(page(rng, OFF)), 0.0)
    assert c.examples == 2 and len(c.pools[0]) == 10
    assert c.probability(c.features(page(rng, ON))) > 0.5  # the one positive still counts


def test_snapshot_restores_the_model_without_refitting():
    c = classifier()
    rng = random.Random(4)
    for i in range(40):
        c.observe(c.features(page(rng, ON if i % 2 else OFF)), 0.3 if i % 2 else 0.0)
    probe = c.features(page(rng, ON))
    again = classifier()
    again.restore(pickle.loads(pickle.dumps(c.snapshot())))
    assert again.fits == c.fits and again.probability(probe) == c.probability(probe)
    assert again.agreement == c.agreement and again.confident == c.confident


class _Profile:
    version = 0

    def keyword_cosine(self, digest: PageDigest) -> float:
        return 0.01


class _Scorer:
    profile = _Profile()


def test_the_learned_label_mixes_the_probability_by_its_weight():
    trainer = Trainer(_Scorer(), None, {}, lambda e, s: None,  # type: ignore[arg-type]
                      relevant_score=0.1, keyword_scale=0.02, profile_score=0.0,
                      discount=0.5, memory=100, window=0)
    plain = PageDigest((("orchid", 2),))
    assert trainer.relevance(0.0, plain) == (0.5, 0.5)
    mixed = PageDigest((("orchid", 2),), relevance=1.0, relevance_weight=0.5)
    label, by_keywords = trainer.relevance(0.0, mixed)
    assert label == 0.75 and by_keywords == 0.5  # the keyword match alone is unchanged
