"""The learned order's constants and the defaults that depend on whether the seeds are examples.

No Scrapy import.  The measurements behind these values are in
``docs/benchmarks-learned-constants.md``.
"""

from __future__ import annotations

from .features import DENSE

# prior weights of the dense columns: parent, grandparent, keyword in anchor / URL / context,
# same host, in the parent's chrome, log(1 + depth), a seed; then the dynamic ones: host evidence,
# directory evidence, log(in-links), the parent's hub evidence (``hub``), link nearness
# (``sibling``)
DENSE_PRIOR = (3.0, 1.0, 2.0, 1.5, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.3, 1.0, 2.0)
PRIOR_BIAS = -3.0
# how strongly the topic profile's terms count in the anchor, URL and context words
PROFILE_SCALES = {"a": 4.0, "u": 3.0, "c": 2.0}
PARENT = DENSE.index("parent")  # the parent page's relevance: best-first's one feature
SEED = DENSE.index("seed")
KW_ANCHOR = DENSE.index("kw_anchor")  # a keyword in the anchor text
KW_CONTEXT = DENSE.index("kw_context")  # ... in the text around the link
DYNAMIC = 5  # host, directory, parent evidence, log(in-links), sibling: at scoring time
assert len(DENSE_PRIOR) == len(DENSE) + DYNAMIC
# the names :meth:`Learned.explain` gives the dense columns' parts (the dynamic ones in the
# order :meth:`Scorer.dynamic` stacks them)
PART_NAMES = (*DENSE, "host", "directory", "inlinks", "hub", "nearness")
assert len(PART_NAMES) == len(DENSE_PRIOR)
# with examples among the seeds: a page this similar to the profile they grow is a full label;
# the examples describe the topic better than the keywords alone
EXAMPLES_PROFILE_SCORE = 0.3
# ... and link nearness and hub evidence are on: the examples' neighbours are likely on topic
# (from the keywords alone they did not help)
EXAMPLES_SIBLING_WINDOW = 4
EXAMPLES_HUB = 1.0
# without examples, half of the URLs handed out are the host bandit's: the crawl must look for
# the topic across hosts; with examples it stays off (the examples say where the topic is)
EXPLORE_HOSTS = 0.5
# the exploration bonus (and the host bandit's index): larger without examples, where the crawl
# must find the topic before it can follow it
EXPLORE = 2.0
EXAMPLES_EXPLORE = 1.0
# the parent-only expert (.mixture): its prior (a, c: the learned model's prior parent weight
# and bias); each expert's log loss is discounted by MIXTURE_DISCOUNT a page fetched, so the
# weights reflect about the last 1 / (1 - MIXTURE_DISCOUNT) pages
PARENT_PRIOR = (DENSE_PRIOR[0], PRIOR_BIAS)
MIXTURE_DISCOUNT = 0.98
# FOCUS_PARENT_EXPERT's default: mix the parent-only expert in (measured live and replayed:
# docs/benchmarks.md)
PARENT_EXPERT = True
# FOCUS_EARNED_OPTIMISM's default: the host bandit's bonus times the host's relevance rate
EARNED_OPTIMISM = False
# FOCUS_BANDIT_BACKLINKS' default: on a host whose pages have all proved off the topic (at least
# COLD_PAGES fetched, labels averaging at most COLD_RATE), the host bandit takes its most-linked
# queued link (.hubs), from the HUB_SET most-linked it keeps a host
BANDIT_BACKLINKS = True
COLD_PAGES = 3
COLD_RATE = 0.05
HUB_SET = 64
# link nearness: a sibling k places away gets the page's label x NEAR_DECAY ** (k - 1)
NEAR_DECAY = 0.7
# a page's keyword match (SMART ltc cosine) that makes it a full label: matches are small numbers
KEYWORD_SCALE = 0.02
# the exploration bonus: the host's share of it (the rest is the directory's)
EXPLORE_SPLIT = 0.5
# hashed word features: 2 ** FEATURE_BITS columns
FEATURE_BITS = 18
MAX_FETCHING = 10_000  # URLs handed out and not yet reported (a page per request in flight)
# FOCUS_LEARN_RERANK's default: the frontier is re-ranked whole up to this many queued links,
# so an ordinary crawl's order is the full re-rank's
RERANK_MAX = 65_536
# FOCUS_LEARN_RERANK_BATCH's default: links a re-rank re-scores past that, so the work per page
# stays a small share of a page's CPU however large the frontier grows
RERANK_BATCH = 4096


def examples_defaults(examples: bool) -> dict[str, float]:
    """The options whose default depends on whether the seeds are examples (used for the
    ones left None, here and by the Scrapy options that a JOBDIR compares)."""
    if examples:
        return {"profile_score": EXAMPLES_PROFILE_SCORE, "sibling_window": EXAMPLES_SIBLING_WINDOW,
                "hub": EXAMPLES_HUB, "explore_hosts": 0.0, "explore": EXAMPLES_EXPLORE}
    return {"profile_score": 0.0, "sibling_window": 0, "hub": 0.0,
            "explore_hosts": EXPLORE_HOSTS, "explore": EXPLORE}
