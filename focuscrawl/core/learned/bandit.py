"""The learned order's host bandit (after Anthelion's domain bandit; no Scrapy): a share of the
URLs handed out is the best link of the host with the highest value plus an optimism bonus for
hosts the crawl knows little about.  A per-link bonus cannot pull a crawl out of a large host
whose anchors repeat a keyword towards hosts it has links to but no evidence about; this can."""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..frontier.policies import BestOf
from ..frontier.queues import Entry, ServerQueues
from .defaults import BANDIT_BACKLINKS, COLD_PAGES, COLD_RATE, EARNED_OPTIMISM
from .hubs import BacklinkPicks
from .scoring import Scorer
from .slots import HostTops

Ready = Callable[[str], bool] | None


class HostBandit:
    """Whose turn it is, the index of each host's best link, and which hosts ever answered."""

    def __init__(self, share: float, queues: ServerQueues, scorer: Scorer,
                 round_robin: int, earned: bool = EARNED_OPTIMISM,
                 backlinks: bool = BANDIT_BACKLINKS) -> None:
        self.earned = earned  # the optimism times the host's relevance rate
        # on a host whose pages all proved off the topic, its most-linked link (.hubs)
        self.backlinks = BacklinkPicks(queues, self._inlinks) if backlinks else None
        self.share = min(1.0, max(0.0, share))  # of the URLs handed out
        self.queues = queues
        self.scorer = scorer  # its host statistics and ``explore``, which a resume may change
        self.round_robin = round_robin
        # host id -> whether a fetch there gave a page (the bandit skips the False ones: a
        # host that never answered is not worth exploring)
        self.reached: dict[int, bool] = {}
        self.answering = 0  # of them, the hosts that gave a page (True in ``reached``)
        self.picks = 0  # for the log only: a replayed journal does not count them
        self.backlink_picks = 0  # the same, of them a host's most-linked link, not its best
        self.picked: Counter[str] = Counter()  # the same, per host (the dashboard's)
        # host id -> its queue (filled as hosts are indexed): a fetch there may raise its key
        self.bucket_of: dict[int, str] = {}
        self.tops = HostTops()
        self.reset()

    @property
    def on(self) -> bool:
        return self.share > 0.0 and not self.round_robin

    def reset(self) -> None:
        """A new index (at the start, or after a restore: built again at the next turn)."""
        self.tops = HostTops()
        self.answering = sum(1 for ok in self.reached.values() if ok)  # (a restore sets it)
        self.rate = self.answer_rate()  # the one the index's keys were made with
        if self.on:
            self.queues.watch()
        if self.backlinks is not None:
            self.backlinks.reset()

    def turn(self, stats: Counter[str]) -> bool:
        """Whether the next URL handed out is the bandit's: ``share`` of them, spread evenly.
        A function of the count handed out alone (a journal replays hand-outs by URL, not by
        asking again, and must reach the same state); a URL put back after a stop with it in
        flight is not counted, so a resumed crawl takes the same turns."""
        if not self.on:
            return False
        n = stats["popped"] - stats["requeued"]
        return int((n + 1) * self.share) > int(n * self.share)

    def answered(self, host_id: int, failing: bool) -> None:
        """A fetch on ``host_id`` gave a page (or, ``failing``, did not); its label is in the
        host's statistics already."""
        first = False
        if not failing:
            was = self.reached.get(host_id)
            self.reached[host_id] = True
            if not was:
                self.answering += 1
            if was is False and (shut := self.tops.shut.pop(host_id, None)) is not None:
                self.tops.file(shut, self.item(shut))  # answered at last: back in
                return
            first = was is None  # its key is no longer weighed by the answer rate
        else:
            self.reached.setdefault(host_id, False)
        bucket = self.bucket_of.get(host_id) if self.earned or first else None
        if bucket is not None and bucket in self.tops.filed:
            self.tops.file(bucket, self.item(bucket))  # a relevant page raises its optimism

    def answer_rate(self) -> float:
        """The chance that a host never tried gives a page: the share of the hosts tried that
        did, with two that did as its prior (1 before any), in steps of a factor sqrt(2), so a
        host's key in the index moves only when the share does by that much.  On the open web
        most hosts a page links to answer; where most do not (a closed web, dead links), a
        never-tried host's turn is mostly a failed robots.txt probe and a refused URL, worth
        this share of its link's value."""
        rate = (self.answering + 2) / (len(self.reached) + 2)
        return min(1.0, 2.0 ** (round(2.0 * math.log2(rate)) / 2.0))

    def optimism(self, host_id: int) -> float:
        """The bonus of a host in the index: ``explore / sqrt(1 + n)`` (UCB), with ``earned``
        times the host's smoothed relevance rate ``(s + 1) / (n + 1)``, so a host whose pages all
        proved irrelevant loses it within a few fetches, while one that has never been tried,
        or whose pages are relevant, keeps it (n pages fetched there, s their labels' sum)."""
        hosts = self.scorer.hosts
        bonus = self.scorer.explore * float(hosts.uncertainty(host_id))
        if not self.earned:
            return bonus  # the bare UCB bonus
        return bonus * (float(hosts.s[host_id]) + 1.0) / (float(hosts.n[host_id]) + 1.0)

    def item(self, bucket: str) -> tuple | None:
        """``bucket``'s item for :class:`HostTops`, or None: no queued link, or never reached
        (remembered in ``shut``, to be filed again when it answers)."""
        top = self.queues.top_of(bucket)
        if top is None:
            return None
        i = self.scorer.hosts.id(top.host)
        self.bucket_of[i] = bucket
        if not self.reached.get(i, True):
            self.tops.shut[i] = bucket
            return None
        index = top.score + self.optimism(i)
        if i not in self.reached:  # never tried: worth what a new host is likely to answer
            index *= self.rate
        # ties go to the link found first: the order of the hosts' queues is not state (a
        # host's queue comes back at the end when a URL in flight at a stop is put back)
        return (-index, top.seq, bucket, top)

    def choice(self, ready: Ready) -> Entry | None:
        """The best link of the host with the highest value + ``explore / sqrt(1 + n)`` among
        the ready hosts (n: pages fetched there); None if there is no choice to make (fewer
        than two hosts with links, never-reached hosts left out).  Nothing moves but the
        index: pops its items best first, files again the stale ones, until two current ones
        are found and one whose host is ready; puts the current ones back."""
        tops = self.tops
        everything, risen = self.queues.risen()
        rate = self.answer_rate()
        if rate != self.rate:  # every never-tried host's key moved: the index is made again
            self.rate = rate
            everything = True
        if everything:
            tops.shut = {}
            tops.reset([item for item in map(self.item, self.queues.buckets())
                        if item is not None])
        else:
            for bucket in risen:
                tops.file(bucket, self.item(bucket))
            tops.compact()
        heap, filed = tops.heap, tops.filed
        kept: list[tuple] = []
        asked = 0
        chosen: Entry | None = None
        while heap and (chosen is None or len(kept) < 2):
            item = heapq.heappop(heap)
            bucket = item[2]
            if filed.get(bucket) is not item:
                continue  # superseded
            fresh = self.item(bucket)
            if fresh is None:
                del filed[bucket]
                continue
            if fresh[3] is not item[3] or fresh[:2] != item[:2]:
                filed[bucket] = fresh  # its key fell: back in its place
                heapq.heappush(heap, fresh)
                continue
            kept.append(item)
            if len(kept) < 2:
                continue  # no choice to make with one host: ready() is not asked
            while chosen is None and asked < len(kept):
                entry = kept[asked][3]
                asked += 1
                if ready is None or ready(entry.host):
                    chosen = entry
        for item in kept:
            heapq.heappush(heap, item)
        if len(kept) < 2:
            return None
        if chosen is not None and self.backlinks is not None:
            chosen = self._backlinked(chosen)
        return chosen

    def _backlinked(self, chosen: Entry) -> Entry:
        """``chosen``, or its host's most-linked queued link if the host's pages have all
        proved off the topic (at least ``COLD_PAGES`` fetched, labels averaging at most
        ``COLD_RATE``)."""
        assert self.backlinks is not None
        hosts = self.scorer.hosts
        i = hosts.id(chosen.host)
        bucket = self.bucket_of[i]
        n = float(hosts.n[i])
        if n >= COLD_PAGES and float(hosts.s[i]) <= COLD_RATE * n:
            hub = self.backlinks.best(bucket)
            if hub is not None and hub is not chosen:
                self.backlink_picks += 1
                return hub
            return chosen
        self.backlinks.forget(bucket)
        return chosen

    def _inlinks(self, entry: Entry) -> float:
        return float(self.scorer.store.inlinks[entry.extra])


class HostBanditFirst(BestOf):
    """The learned order's queue policy: on the host bandit's turns (its share of the URLs
    handed out, :meth:`HostBandit.turn`) the bandit's choice, else :class:`BestOf`'s."""

    def __init__(self, order: Any) -> None:
        self.order = order  # the learned valuation: its bandit is made when it is bound

    def pop(self, ready: Ready, slack: float | None, held: Ready) -> Entry | None:
        f = self.frontier
        bandit = self.order.bandit
        if bandit.turn(f.stats):
            f.balance()
            entry = bandit.choice(ready)
            if entry is not None:
                f.queues.take(entry)
                bandit.picks += 1
                bandit.picked[entry.host] += 1
                return entry
        return super().pop(ready, slack, held)
