"""``/metrics``: the status as Prometheus metrics, through ``prometheus-client``.

A collector of our own in a :class:`CollectorRegistry` of our own (not the process-wide
default one, which another library, or a second crawl in the same process, may use): each
scrape reads the dashboard's cached status, so nothing is counted twice and nothing is
counted per page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

#: the Content-Type of Prometheus' text format
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class StatusCollector:
    """Prometheus collector over a status dict (``StatusBuilder.get``)."""

    def __init__(self, status: Callable[[], dict[str, Any]]) -> None:
        self.status = status

    def collect(self) -> Iterator[Metric]:
        st = self.status()
        yield CounterMetricFamily("focuscrawl_pages", "Pages fetched (2xx HTML responses).",
                                  value=st["pages"])
        yield CounterMetricFamily("focuscrawl_relevant_pages",
                                  "Distinct pages scoring at least FOCUS_RELEVANT_SCORE.",
                                  value=st["relevant"])
        yield CounterMetricFamily("focuscrawl_near_duplicates",
                                  "Pages whose main text is a near-copy of one exported before.",
                                  value=st["near_duplicates"])
        yield GaugeMetricFamily("focuscrawl_harvest_rate",
                                "Relevant pages over pages scored.", value=st["harvest_rate"])
        yield GaugeMetricFamily("focuscrawl_queued_urls", "URLs in the frontier.",
                                value=st["queued"])
        frontier = st.get("frontier") or {}
        if "memory" in frontier:
            where = GaugeMetricFamily("focuscrawl_frontier_urls",
                                      "URLs in the frontier, in memory and on disk.",
                                      labels=["where"])
            where.add_metric(["memory"], frontier["memory"])
            where.add_metric(["disk"], frontier["disk"])
            yield where
        yield GaugeMetricFamily("focuscrawl_max_pages", "The crawl's page budget (0: none).",
                                value=st["max_pages"])
        yield GaugeMetricFamily("focuscrawl_servers_busy",
                                "Servers with a request handed out or downloading.",
                                value=st["servers_busy"])
        yield GaugeMetricFamily("focuscrawl_servers", "Servers known to the crawl.",
                                value=st["servers_total"])
        downloads = CounterMetricFamily("focuscrawl_downloads",
                                        "Responses downloaded, by HTTP status.",
                                        labels=["status"])
        for status, n in sorted(st["statuses"].items()):
            downloads.add_metric([status], n)
        yield downloads
        yield CounterMetricFamily("focuscrawl_download_errors",
                                  "Downloads that ended in an exception.", value=st["errors"])
        counters = CounterMetricFamily("focuscrawl_events", "The crawl's counters.",
                                       labels=["event"])
        for name, n in sorted(st["counters"].items()):
            counters.add_metric([name], n)
        yield counters
        revisit = st.get("revisit")
        if revisit:  # a continuous crawl (FOCUS_REVISIT)
            yield GaugeMetricFamily("focuscrawl_kept_pages", "Pages the crawl keeps fresh.",
                                    value=revisit["pages"])
            yield GaugeMetricFamily("focuscrawl_estimated_freshness",
                                    "Relevance-weighted share of kept pages estimated current.",
                                    value=revisit["freshness"])
            yield GaugeMetricFamily("focuscrawl_revisits_per_minute",
                                    "Revisits answered in the last minute.",
                                    value=revisit["per_minute"])
            outcomes = CounterMetricFamily("focuscrawl_revisits", "Revisits, by what they found.",
                                           labels=["outcome"])
            for outcome in ("changes", "unchanged", "gone"):
                outcomes.add_metric([outcome], revisit[outcome])
            yield outcomes
        yield GaugeMetricFamily("focuscrawl_finished", "1 once the crawl has ended.",
                                value=1.0 if st["state"] == "finished" else 0.0)
        cluster = st.get("cluster")
        if cluster:
            yield CounterMetricFamily("focuscrawl_cluster_pages",
                                      "Pages fetched by every worker of the crawl.",
                                      value=cluster["pages"])
            yield CounterMetricFamily("focuscrawl_cluster_relevant_pages",
                                      "Relevant pages of every worker of the crawl.",
                                      value=cluster["relevant"])
            yield GaugeMetricFamily("focuscrawl_cluster_queued_urls",
                                    "URLs in the crawl's shared frontier.",
                                    value=cluster["queued"])
            yield GaugeMetricFamily("focuscrawl_cluster_workers", "Live workers.",
                                    value=cluster["workers"])


def registry_for(status: Callable[[], dict[str, Any]]) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StatusCollector(status))
    return registry


def exposition(registry: CollectorRegistry) -> bytes:
    return generate_latest(registry)
