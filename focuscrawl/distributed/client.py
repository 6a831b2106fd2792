"""The Redis connection every shared part takes, and its replies as text (no Scrapy)."""

from __future__ import annotations

from redis import Redis
from redis.cluster import RedisCluster

#: a connection to one Redis server or to a Redis Cluster
Client = Redis | RedisCluster


def text(value: bytes | str) -> str:
    """A reply as text (the client may or may not decode replies)."""
    return value.decode() if isinstance(value, bytes) else value
