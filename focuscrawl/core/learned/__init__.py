"""The ``learned`` crawl order: it learns, from its own fetches, which links lead to the topic.

No Scrapy import.  After the research line that followed the seed papers (Chakrabarti et al.'s
apprentice, Rennie & McCallum's learned link value, ACHE's online link classifier, Pant et al.'s
exploration): a link's priority is the probability that its target is relevant, predicted from
the link's own evidence and what the crawl has learnt so far:

* **features** (:mod:`.features`): hashed words of the anchor text, the URL and
  the text around the link; the parent's and grandparent's relevance; keyword matches in the
  anchor, URL and context; same host; depth; and, recomputed at every re-rank, the relevance
  seen so far on the link's host and directory and how many pages link to it;
* **prior**: before any label the model is a hand-set logistic function of those features, with
  the topic profile (the keywords) projected onto the anchor, URL and context words, so the first
  pages are ordered like best-first plus Cho's keyword-in-anchor rule;
* **labels**: each fetched page labels the link that led to it with its relevance in [0, 1]:
  its keyword match (SMART ltc with the crawl's IDF, phrases as phrases, in the page's main
  text) over ``keyword_scale``; with ``profile_score`` > 0, also its similarity to the grown
  topic profile over that (whichever is higher); with ``examples`` (the user says the seeds
  are on-topic examples) a seed page is labelled 1 and joins the profile whatever its words,
  and ``profile_score`` defaults to ``EXAMPLES_PROFILE_SCORE``; with ``discount`` > 0 a
  relevant page also raises the labels of its parent and grandparent (a link to a page that
  leads to the topic is worth following: Rennie & McCallum); a failed fetch labels its link 0;
* **the topic profile** grows by Rocchio feedback from the relevant pages (examples among the
  seeds included) and is projected onto the anchor, URL and context words, so a link whose
  text uses the topic's vocabulary, not only the user's words, scores;
* **training**: one AdaGrad step per fetched page on its label (and its ancestors' revised
  ones); every ``learn_every`` pages the profile is rebuilt, the recent examples are replayed
  once, and the frontier is re-scored in a few vectorised numpy operations, then re-queued:
  the whole of it while it holds at most ``rerank_max`` links, past that ``rerank_batch`` of
  them, the best and a window of the rest that moves on at each re-rank (see
  :mod:`.rerank`: bounded work per page however large the frontier grows);
* **siblings** (the slides' distiller and link nearness; by default on with ``examples``,
  off otherwise): a fetched page's label is evidence
  about the other links of the page it was reached from: all of them (the parent's hub
  evidence, log-odds of its fetched children's rate, weighed ``hub`` in the prior) and most of
  all the ``sibling_window`` links on each side of it (a table of contents lists a chapter's
  sections together: ``label x NEAR_DECAY ** (distance - 1)``, weighed ``sibling``); those
  siblings are re-scored at once, not at the next re-rank;
* **exploration**: ``explore`` adds optimism to the logit of a link into a host or directory
  the crawl knows little about: a UCB bonus of ``explore / sqrt(1 + pages fetched there)``,
  half for the host, half for the directory; and ``explore_hosts`` of the URLs handed out are
  chosen by a bandit over hosts (after Anthelion's domain bandit): the host whose best link
  has the highest value plus ``explore / sqrt(1 + n)`` gives that link (n pages fetched
  there; with ``earned_optimism``, times ``(s + 1) / (n + 1)``, s their labels' sum: a host
  whose pages all proved irrelevant loses its optimism in a few fetches).  A per-link bonus
  cannot pull a crawl out of a large host whose anchors repeat a keyword (a reference manual)
  towards hosts it has links to but no evidence about; the bandit does.  On a host whose
  pages have all proved off the topic, the bandit takes its most-linked queued link instead
  (``bandit_backlinks``, Cho et al.'s backlink count: the host's lists, its way out, :mod:`.hubs`);
* **best-first's evidence beside it** (:mod:`.mixture`, with ``parent_expert``): a link's
  probability mixes the model's with a parent-only model's, each weighted by how well it has
  predicted this crawl's labels (Bayesian model averaging over discounted log losses): where
  the model's features mislead it, the crawl is ordered as best-first orders it.

Links are scored in batches: a link found is queued at once but scored, with every link found
since, when the next URL is chosen (one vectorised call per page instead of one per link).

The parts: :mod:`.features`, :mod:`.model`, :mod:`.profile` and :mod:`.areas` (the pieces),
:mod:`.scoring` (link -> value), :mod:`.mixture` (the parent-only expert), :mod:`.training`
(labels, examples, siblings), :mod:`.bandit` and :mod:`.hubs` (the host bandit, its
most-linked picks, its queue policy), :mod:`.rerank` and :mod:`.slots` (re-ranking and its indexes),
:mod:`.state` (snapshots, spilled rows), :mod:`.defaults` (constants) and :mod:`.order` (the
valuation, and the frontier that keeps it: :func:`learned_frontier`).
"""

import sys

from . import areas, features, model, profile
from .areas import AreaStats
from .defaults import (
    EXAMPLES_EXPLORE,
    EXPLORE,
    RERANK_BATCH,
    RERANK_MAX,
    examples_defaults,
)
from .features import DENSE, FeatureStore, LinkFeaturizer, directory_of, url_tokens
from .model import LinkModel, sigmoid
from .order import Learned, learned_frontier
from .profile import PageDigest, TopicProfile

# these modules were ``focuscrawl.core.learning.*``: the pickles of a JOBDIR (snapshots, journal
# operations) made before the move name PageDigest by that path, and must still load
_MOVED_FROM = "focuscrawl.core.learning"
sys.modules.setdefault(_MOVED_FROM, sys.modules[__name__])
for _module in (areas, features, model, profile):
    sys.modules.setdefault(f"{_MOVED_FROM}.{_module.__name__.rpartition('.')[2]}", _module)

__all__ = [
    "DENSE", "EXAMPLES_EXPLORE", "EXPLORE", "RERANK_BATCH", "RERANK_MAX", "AreaStats",
    "FeatureStore", "Learned", "LinkFeaturizer", "LinkModel", "PageDigest", "TopicProfile",
    "directory_of", "examples_defaults", "learned_frontier", "sigmoid", "url_tokens",
]
