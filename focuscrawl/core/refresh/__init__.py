"""Keeping a crawl fresh: how often pages change, and when to look at them again (no Scrapy).

* :mod:`.estimate` -- each page's change rate from whether it changed between visits (Cho &
  Garcia-Molina's estimator for incomplete observation), starting from a prior pooled over
  the page's server and directory;
* :mod:`.policy` -- how a revisit budget is spread over pages: the allocation maximising
  relevance-weighted time-averaged freshness (Cho & Garcia-Molina), with the uniform and
  proportional policies as baselines;
* :mod:`.split` -- the next fetch: a new page or a revisit;
* :mod:`.schedule` -- the revisit schedule: known pages by due time, their versions and rates;
* :mod:`.freshness` -- exact time-averaged freshness of a schedule against true change times.

Every function takes the time as an argument: the same code runs on the crawl's clock and on a
simulated one.
"""

from focuscrawl.core.refresh.estimate import ChangeStats, RateEstimator, rate_regular
from focuscrawl.core.refresh.policy import POLICIES, Allocation, allocate, freshness
from focuscrawl.core.refresh.schedule import PageState, RevisitSchedule
from focuscrawl.core.refresh.split import Split

__all__ = [
    "POLICIES", "Allocation", "ChangeStats", "PageState", "RateEstimator", "RevisitSchedule",
    "Split", "allocate", "freshness", "rate_regular",
]
