"""A real redis-server for the tests and the benchmark: 127.0.0.1, a free port, a temp dir.

No persistence (``--save '' --appendonly no``) unless ``persistent=True`` (an append-only file
synced at every write, in the server's temp dir): the server lives as long as the fixture.
:meth:`RedisServer.kill` and :meth:`RedisServer.restart` stop it and start it again on the same
port and data dir (a Redis restart seen by running workers).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``with RedisServer() as srv:`` -- ``srv.url``, ``srv.client()``."""

    def __init__(self, startup_timeout: float = 10.0, *, persistent: bool = False) -> None:
        self.startup_timeout = startup_timeout
        self.persistent = persistent
        self.port = 0
        self.dir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def start(self) -> RedisServer:
        self.dir = Path(tempfile.mkdtemp(prefix="focusredis-"))
        for _ in range(20):  # the free port may be taken before redis binds it: try another
            self.port = _free_port()
            if self._launch():
                return self
        raise RuntimeError(f"redis-server did not start: {(self.dir / 'redis.log').read_text()}")

    def _launch(self) -> bool:
        assert self.dir is not None
        persistence = (["--appendonly", "yes", "--appendfsync", "always"] if self.persistent
                       else ["--appendonly", "no"])
        log = open(self.dir / "redis.log", "ab")  # noqa: SIM115 - the child owns it
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port), "--dir",
             str(self.dir), "--save", "", *persistence, "--daemonize", "no"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)
        log.close()
        if self._wait_ready():
            return True
        self.proc.kill()
        self.proc.wait()
        return False

    def kill(self) -> None:
        """Stop the server at once (SIGKILL: no final save; with persistence every write is
        already in the append-only file)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def restart(self) -> None:
        """Start it again on the same port and data dir (what it reloads: the append-only file
        with persistence, nothing without)."""
        deadline = time.monotonic() + self.startup_timeout
        while not self._launch():  # the port may linger a moment after the kill
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not restart: "
                                   f"{(self.dir / 'redis.log').read_text()}")

    def _wait_ready(self) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2)
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except redis.ConnectionError:
                    time.sleep(0.02)  # polling the server's readiness, not synchronising a test
            return False
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="module", name="redis_server")
def redis_server_fixture() -> Iterator[RedisServer]:
    """One redis-server for a test module; tests keep apart with their own key prefixes."""
    with RedisServer() as srv:
        yield srv
