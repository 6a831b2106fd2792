"""A real Redis Cluster for the tests and the benchmark: 127.0.0.1, free ports, a temp dir.

``RedisCluster(masters=3, replicas=1)`` starts ``masters * (1 + replicas)`` redis-server
processes with ``--cluster-enabled yes`` and joins them with ``redis-cli --cluster create ...
--cluster-yes``; it is ready once every node reports ``cluster_state:ok``.  A small
``cluster-node-timeout`` and ``cluster-replica-validity-factor 0`` let a replica take over
within seconds of its master's death (:meth:`kill_master_of`, then :meth:`wait_failover`, which
polls ``CLUSTER NODES`` and ``CLUSTER INFO``: never a fixed sleep).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster as Client

from .redis_server import REDIS_SERVER, _free_port

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


class Node:
    def __init__(self, port: int, directory: Path, proc: subprocess.Popen[bytes]) -> None:
        self.port = port
        self.dir = directory
        self.proc = proc

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


class RedisCluster:
    """``with RedisCluster() as cl:`` -- ``cl.url`` (any node), ``cl.client()``, ``cl.nodes``."""

    def __init__(self, masters: int = 3, replicas: int = 1, *, node_timeout_ms: int = 2000,
                 startup_timeout: float = 30.0) -> None:
        self.masters = masters
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.startup_timeout = startup_timeout
        self.dir: Path | None = None
        self.nodes: list[Node] = []

    @property
    def url(self) -> str:
        live = next(n for n in self.nodes if n.alive)
        return f"redis://127.0.0.1:{live.port}/0"

    def client(self) -> Client:
        live = next(n for n in self.nodes if n.alive)
        return Client(host="127.0.0.1", port=live.port)

    def start(self) -> RedisCluster:
        self.dir = Path(tempfile.mkdtemp(prefix="focuscluster-"))
        for i in range(self.masters * (1 + self.replicas)):
            self.nodes.append(self._launch(i))
        addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run([REDIS_CLI, "--cluster", "create", *addrs, "--cluster-replicas",
                        str(self.replicas), "--cluster-yes"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, timeout=60)
        self.wait_ok()
        return self

    def _launch(self, i: int) -> Node:
        assert self.dir is not None
        for _ in range(20):  # the free port (or its bus port, +10000) may be taken: another
            port = _free_port()
            if port > 55000:
                continue
            d = self.dir / str(port)
            d.mkdir()
            log = open(d / "redis.log", "ab")  # noqa: SIM115 - the child owns it
            proc = subprocess.Popen(
                [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(d),
                 "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                 "--cluster-node-timeout", str(self.node_timeout_ms),
                 "--cluster-replica-validity-factor", "0",
                 "--save", "", "--appendonly", "no", "--daemonize", "no"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=d)
            log.close()
            node = Node(port, d, proc)
            if self._ready(node):
                return node
            proc.kill()
            proc.wait()
        raise RuntimeError(f"cluster node {i} did not start")

    def _ready(self, node: Node) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and node.alive:
            try:
                if node.client().ping():
                    return True
            except redis.RedisError:
                pass
            time.sleep(0.05)
        return False

    def _info(self, node: Node) -> dict[str, str]:
        raw = node.client().execute_command("CLUSTER", "INFO")
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        return dict(line.split(":", 1) for line in text.split() if ":" in line)

    def wait_ok(self) -> None:
        """Until every live node says ``cluster_state:ok`` and every slot is served."""
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                if all(self._info(n).get("cluster_state") == "ok"
                       and self._info(n).get("cluster_slots_ok") == "16384"
                       for n in self.nodes if n.alive):
                    return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster is not ok")
            time.sleep(0.1)

    def owner(self, slot: int) -> int:
        """The port of the live master serving ``slot``, as a live node sees it."""
        live = next(n for n in self.nodes if n.alive)
        for start, end, master, *_ in live.client().execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return int(master[1])
        raise LookupError(slot)

    def kill_master_of(self, key: str) -> int:
        """SIGKILL the master serving ``key``'s slot; its port."""
        slot = self.client().keyslot(key)
        port = self.owner(slot)
        node = next(n for n in self.nodes if n.port == port)
        node.proc.kill()
        node.proc.wait()
        return slot

    def wait_failover(self, slot: int, dead_port: int) -> int:
        """Until a live replica serves ``slot`` in place of ``dead_port`` and the cluster is
        ok again; the new master's port."""
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                port = self.owner(slot)
                if port != dead_port:
                    self.wait_ok()
                    return port
            except (redis.RedisError, LookupError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("no replica took over")
            time.sleep(0.1)

    def stop(self) -> None:
        for n in self.nodes:
            if n.alive:
                n.proc.kill()
                n.proc.wait()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def redis_cluster() -> Iterator[RedisCluster]:
    with RedisCluster() as cl:
        yield cl
