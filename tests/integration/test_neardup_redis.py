"""The near-duplicate index in Redis: a real redis-server and a real Redis Cluster."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from focuscrawl.core.neardup import Layout, MemoryIndex, Signer
from focuscrawl.distributed.neardup import RedisIndex
from tests.support.redis_cluster import RedisCluster
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

LAYOUT = Layout.for_threshold(0.9)
SIGNER = Signer(LAYOUT)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with RedisCluster(masters=3, replicas=0) as cl:
        yield cl


@pytest.fixture(params=["server", "cluster"])
def client_of(request, redis_server) -> Any:
    """A function making a new client of a redis-server or of a Redis Cluster."""
    if request.param == "server":
        return lambda: redis.Redis.from_url(redis_server.url)
    cl = request.getfixturevalue("cluster")
    return cl.client


def texts(seed: int, n: int) -> list[str]:
    """``n`` texts: distinct ones, and near-copies and far copies of earlier ones."""
    rng = random.Random(seed)
    made: list[list[str]] = []
    for _ in range(n):
        if made and rng.random() < 0.5:
            base = list(rng.choice(made))
            change = rng.choice([0.005, 0.01, 0.05, 0.2])
            made.append([w if rng.random() > change else f"x{rng.randrange(10**6)}"
                         for w in base])
        else:
            made.append([f"w{rng.randrange(20000)}" for _ in range(rng.randint(40, 400))])
    return [" ".join(words) for words in made]


def distinct(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(f"w{rng.randrange(10**6)}" for _ in range(200)) for _ in range(n)]


def test_redis_answers_as_the_memory_index(client_of, request):
    key = f"nd-same-{request.node.callspec.id}:"
    memory, shared = MemoryIndex(LAYOUT), RedisIndex(client_of(), key, LAYOUT)
    answers = []
    for i, text in enumerate(texts(4, 150)):
        sig = SIGNER.signature(text)
        assert sig is not None
        url = f"http://h{i % 3}.test/{i}"
        answers.append((memory.add(url, sig), shared.add(url, sig)))
    assert all(a == b for a, b in answers), [a for a in answers if a[0] != a[1]]
    copies = sum(a is not None for a, _ in answers)
    assert 10 < copies < 75  # near-copies were found, far copies were not
    assert len(shared) == len(memory)
    # the same URL again is no copy of itself, and is not indexed twice
    first = SIGNER.signature(texts(4, 1)[0])
    assert first is not None
    assert shared.add("http://h0.test/0", first) is None and len(shared) == len(memory)


def test_of_workers_adding_near_copies_at_once_exactly_one_is_not_marked(client_of, request):
    """Four workers, each with its own connection, add near-copies of one text at the same
    moment, over and over: each time exactly one page is indexed and the others name it."""
    key = f"nd-race-{request.node.callspec.id}:"
    workers = 4
    rounds = 25
    indexes = [RedisIndex(client_of(), key, LAYOUT) for _ in range(workers)]
    base = distinct(9, rounds)
    barrier = threading.Barrier(workers)
    answers: list[list[str | None]] = [[None] * workers for _ in range(rounds)]
    errors: list[BaseException] = []

    def work(w: int) -> None:
        try:
            for r in range(rounds):
                sig = SIGNER.signature(f"{base[r]} edited by worker {w}")
                assert sig is not None
                barrier.wait(timeout=30)
                answers[r][w] = indexes[w].add(f"http://w{w}.test/{r}", sig)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    for r, got in enumerate(answers):
        kept = [w for w, a in enumerate(got) if a is None]
        assert len(kept) == 1, (r, got)
        assert all(a == f"http://w{kept[0]}.test/{r}" for a in got if a is not None), (r, got)
    assert len(indexes[0]) == rounds


def test_a_worker_signing_otherwise_is_refused(client_of, request):
    key = f"nd-layout-{request.node.callspec.id}:"
    text = distinct(2, 1)[0]
    sig = SIGNER.signature(text)
    assert sig is not None
    RedisIndex(client_of(), key, LAYOUT).add("http://a.test/1", sig)
    other = Layout.for_threshold(0.8)
    with pytest.raises(redis.ResponseError, match="FOCUSCRAWL_NEARDUP_LAYOUT"):
        RedisIndex(client_of(), key, other).add("http://a.test/2", sig)


def test_the_index_is_in_one_slot_of_its_own(cluster):
    from redis.cluster import key_slot

    index = RedisIndex(cluster.client(), "focuscrawl:topic:", LAYOUT)
    slots = {key_slot(k.encode()) for k in index.keys}
    assert len(slots) == 1
    assert slots != {key_slot(b"{focuscrawl:topic:g}cfg")}  # not the crawl's global slot
