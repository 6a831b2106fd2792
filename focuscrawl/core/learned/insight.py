"""What the learned order has learnt, as plain data for a dashboard (read only, no Scrapy)."""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from ..fingerprints import fingerprint
from .defaults import PART_NAMES


def learned_insight(order: Any, out: dict[str, Any], top: int = 12) -> dict[str, Any]:
    """The base's figures and what the order has learnt: the hashed words (``ns:token``;
    namespaces a anchor, u URL, c context, h host, d directory) and the link features
    with the largest positive and negative weights, the topic profile's strongest terms,
    and the host bandit's picks.  Read only; O(features) numpy, so asked rarely."""
    scorer = order.scorer
    model = scorer.model
    w = model.w
    k = min(top, len(w) // 2)
    ends = np.argpartition(w, (k, len(w) - k - 1))  # one pass for both ends
    low, high = ends[:k], ends[len(w) - k:]
    names = scorer.featurizer.tokens_of({int(c) for c in (*high, *low)})

    def words(cols: np.ndarray, sign: float) -> list[dict[str, Any]]:
        ranked = sorted(cols.tolist(), key=lambda c: -sign * w[c])
        return [{"word": " / ".join(names.get(c, [f"#{c}"])), "weight": round(float(w[c]), 4)}
                for c in ranked if sign * w[c] > 0]

    features = sorted(zip(PART_NAMES, model.v.tolist(), strict=True),
                      key=lambda nv: -abs(nv[1]))
    terms = heapq.nlargest(top, scorer.profile.weights.items(), key=lambda tw: tw[1])
    hosts = []
    for name, picks in order.bandit.picked.most_common(top):
        i = scorer.hosts.ids.get_fp(fingerprint(name))
        n = float(scorer.hosts.n[int(i)]) if i is not None else 0.0
        s = float(scorer.hosts.s[int(i)]) if i is not None else 0.0
        hosts.append({"host": name, "picks": picks, "pages": int(n),
                      "relevance": round(s / n, 3) if n else None})
    out["learned"] = {
        "positive": words(high, 1.0), "negative": words(low, -1.0),
        "features": [{"feature": n, "weight": round(v, 4)} for n, v in features],
        "bias": round(model.b, 4), "updates": model.updates,
        "profile": [{"term": t, "weight": round(x, 4)} for t, x in terms],
        "profile_version": scorer.profile.version, "examples": len(order.trainer.ex_slot),
        "bandit": {"share": order.bandit.share, "picks": order.bandit.picks,
                   "backlink_picks": order.bandit.backlink_picks,
                   "explore": order.explore, "hosts": hosts},
    }
    return out
