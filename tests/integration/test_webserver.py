"""The local multi-host web server: routing, pages, robots, latency, in-flight log, analysis."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import (
    LOG_FIELDS,
    HostOptions,
    Page,
    ServerProcess,
    Sites,
    WebServer,
    analyze,
    read_log,
)

PAGES = {
    "a.test": {
        "/": Page("<html><body><a href='/p1.html'>p1</a></body></html>"),
        "/p1.html": Page("<html><body>page one of a</body></html>"),
        "/moved": Page.redirect("http://b.test/landing.html"),
        "/temp": Page.redirect("/p1.html", status=302),
        "/search?q=x": Page("query page"),
        "/data.bin": Page(b"\x00\xff\xfe binary", content_type="application/octet-stream"),
        "/gone": Page("gone", status=410),
        "/custom": Page("x", headers={"X-Test": "yes"}),
    },
    "b.test": {
        "/landing.html": Page("<html><body>landing on b</body></html>"),
        "/private/secret.html": Page("secret"),
        "/slow.html": Page("slow", delay_ms=300),
    },
}
CONFIG = {"hosts": {
    "b.test": {"robots": "User-agent: *\nDisallow: /private/\n"},
    "trap.test": {"traps": ["/calendar/"]},
}}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "docs.test" / "lib").mkdir(parents=True)
    (root / "docs.test" / "index.html").write_text("<html>docs index</html>")
    (root / "docs.test" / "lib" / "index.html").write_text("<html>lib index</html>")
    (root / "docs.test" / "lib" / "re.html").write_text("<html>regular expressions</html>")
    (root / "docs.test" / "notes.txt").write_text("plain notes")
    (root / "docs.test" / "robots.txt").write_text("User-agent: *\nDisallow: /lib/private/\n")
    (root / "docs.test" / "_redirects.json").write_text(json.dumps({
        "/old.html": "/lib/re.html",
        "/away.html": {"location": "http://a.test/p1.html", "status": 302},
    }))
    (root / "trap.test").mkdir()
    (root / "trap.test" / "index.html").write_text("<a href='/calendar/'>calendar</a>")
    (root / "_private").mkdir()
    (root / "_private" / "index.html").write_text("not a host")
    return root


@pytest.fixture(scope="module")
def server(tree: Path):
    with ServerProcess(root=tree, pages=PAGES, config=CONFIG, bind_hosts=True) as srv:
        yield srv


def test_hosts_come_from_tree_and_pages(server: ServerProcess) -> None:
    assert server.hosts == ["a.test", "b.test", "docs.test", "trap.test"]
    assert server.proxy_url == f"http://127.0.0.1:{server.port}"
    assert server.url("docs.test", "lib/re.html") == "http://docs.test/lib/re.html"


def test_proxy_form_and_host_header_routing(server: ServerProcess) -> None:
    st, _, body = server.get("a.test", "/p1.html", proxy_form=True)
    assert (st, body) == (200, b"<html><body>page one of a</body></html>")
    # origin form: the Host header picks the site, its port ignored
    st, _, body = server.get("b.test", "/landing.html", proxy_form=False,
                             headers={"Host": "b.test:8080"})
    assert (st, body) == (200, b"<html><body>landing on b</body></html>")
    # the absolute-form target wins over a contradicting Host header
    st, _, body = server.get("docs.test", "/lib/re.html", headers={"Host": "a.test"})
    assert (st, body) == (200, b"<html>regular expressions</html>")


def test_urllib_through_http_proxy(server: ServerProcess) -> None:
    """What a crawler honouring http_proxy does: every host through the one port."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": server.proxy_url}))
    with opener.open("http://docs.test/lib/", timeout=10) as r:
        assert r.read() == b"<html>lib index</html>"
    with opener.open("http://docs.test/old.html", timeout=10) as r:  # redirect followed
        assert r.geturl() == "http://docs.test/lib/re.html"
        assert r.read() == b"<html>regular expressions</html>"
    with opener.open("http://a.test/moved", timeout=10) as r:  # cross-host redirect
        assert r.geturl() == "http://b.test/landing.html"


def test_per_host_addresses(server: ServerProcess) -> None:
    assert server.addresses["a.test"] == f"127.0.0.10:{server.port}"
    assert server.addresses["trap.test"] == f"127.0.0.13:{server.port}"
    for host, path, want in [("docs.test", "/lib/re.html", b"<html>regular expressions</html>"),
                             ("a.test", "/p1.html", b"<html><body>page one of a</body></html>")]:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                server.direct_url(host, path), timeout=10) as r:
            assert r.read() == want
    # the address stands for its host even when Host names the address
    addr, port = server.addresses["b.test"].split(":")
    conn = http.client.HTTPConnection(addr, int(port), timeout=10)
    conn.request("GET", "/landing.html")
    assert conn.getresponse().read() == b"<html><body>landing on b</body></html>"
    conn.close()


def test_not_found(server: ServerProcess) -> None:
    assert server.get("nowhere.test", "/")[0] == 404
    assert server.get("a.test", "/missing.html")[0] == 404
    assert server.get("docs.test", "/_redirects.json")[0] == 404
    assert server.get("_private", "/")[0] == 404
    assert server.get("docs.test", "/lib/../../_private/index.html")[0] in (400, 404)
    assert server.get("a.test", "/gone")[0] == 410


def test_redirects_and_directories(server: ServerProcess) -> None:
    st, h, _ = server.get("a.test", "/moved")
    assert (st, h["location"]) == (301, "http://b.test/landing.html")
    st, h, _ = server.get("a.test", "/temp")
    assert (st, h["location"]) == (302, "/p1.html")
    st, h, _ = server.get("docs.test", "/away.html")
    assert (st, h["location"]) == (302, "http://a.test/p1.html")
    st, h, _ = server.get("docs.test", "/lib")
    assert (st, h["location"]) == (301, "/lib/")
    st, _, body = server.get("docs.test", "/")
    assert (st, body) == (200, b"<html>docs index</html>")


def test_content_types_headers_query_and_bytes(server: ServerProcess) -> None:
    st, h, body = server.get("docs.test", "/notes.txt")
    assert (st, h["content-type"], body) == (200, "text/plain; charset=utf-8", b"plain notes")
    assert server.get("docs.test", "/lib/re.html")[1]["content-type"].startswith("text/html")
    st, h, body = server.get("a.test", "/data.bin")
    assert (h["content-type"], body) == ("application/octet-stream", b"\x00\xff\xfe binary")
    assert server.get("a.test", "/custom")[1]["x-test"] == "yes"
    assert server.get("a.test", "/search?q=x")[2] == b"query page"
    assert server.get("a.test", "/p1.html?utm=1")[0] == 200  # query ignored when not listed
    st, h, body = server.get("a.test", "/p1.html", method="HEAD")
    assert (st, body, h["content-length"]) == (200, b"", "39")


def test_robots(server: ServerProcess) -> None:
    assert server.get("a.test", "/robots.txt")[2] == b"User-agent: *\nAllow: /\n"
    assert server.get("b.test", "/robots.txt")[2] == b"User-agent: *\nDisallow: /private/\n"
    st, h, body = server.get("docs.test", "/robots.txt")
    assert (st, body) == (200, b"User-agent: *\nDisallow: /lib/private/\n")
    assert h["content-type"].startswith("text/plain")
    assert server.robots_texts()["b.test"] == "User-agent: *\nDisallow: /private/\n"


def test_trap_is_endless(server: ServerProcess) -> None:
    path = "/calendar/"
    for _ in range(5):
        st, _, body = server.get("trap.test", path)
        assert st == 200
        path += "next/"
        assert f'href="{path}"'.encode() in body


def test_connect_is_refused(server: ServerProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("CONNECT", "a.test:443")
    assert conn.getresponse().status == 501
    conn.close()


def test_other_methods_get_405_and_are_logged(server: ServerProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "http://a.test/p1.html", body=b"x=1",
                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    r = conn.getresponse()
    r.read()
    assert (r.status, r.getheader("Allow")) == (405, "GET, HEAD")
    conn.request("GET", "http://a.test/p1.html")  # same connection still usable
    assert conn.getresponse().status == 200
    conn.close()
    assert any(row["method"] == "POST" and row["status"] == 405 and row["host"] == "a.test"
               for row in server.read_log())


def test_keep_alive_serves_several_requests_on_one_connection(server: ServerProcess) -> None:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    client = "{}:{}".format(*sock.getsockname())
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.sock = sock
    for path in ("/", "/p1.html", "/missing"):
        conn.request("GET", f"http://a.test{path}")
        r = conn.getresponse()
        r.read()
        assert not r.will_close
    conn.close()
    rows = [(r["path"], r["status"]) for r in server.read_log() if r["client"] == client]
    assert rows == [("/", 200), ("/p1.html", 200), ("/missing", 404)]


def test_log_rows_are_typed_and_complete(server: ServerProcess) -> None:
    t0 = time.time()
    server.get("b.test", "/landing.html", headers={"User-Agent": "tab\tagent"})
    rows = [r for r in server.read_log() if r["time_epoch"] >= t0 - 0.01]
    row = next(r for r in rows if r["path"] == "/landing.html")
    assert set(row) == set(LOG_FIELDS)
    assert (row["host"], row["method"], row["status"], row["bytes"]) == (
        "b.test", "GET", 200, len(b"<html><body>landing on b</body></html>"))
    assert row["user_agent"] == "tab agent"
    assert row["inflight_host"] >= 1 and row["duration_ms"] >= 0
    assert row["time_iso"].endswith("Z")
    assert Path(server.log_path).read_text().startswith("#fields\ttime_iso\ttime_epoch\thost")


def test_client_leaving_during_latency_is_logged_499(server: ServerProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=0.1)
    conn.request("GET", "http://b.test/slow.html", headers={"User-Agent": "impatient"})
    with pytest.raises(TimeoutError):
        conn.getresponse()
    conn.close()
    deadline = time.monotonic() + 10
    rows: list[dict] = []
    while not rows:  # the server logs the request once its 0.3 s latency is over
        assert time.monotonic() < deadline
        rows = [r for r in server.read_log() if r["user_agent"] == "impatient"]
        time.sleep(0.02)
    assert [(r["path"], r["status"], r["bytes"]) for r in rows] == [("/slow.html", 499, 0)]


def test_slow_page_latency(server: ServerProcess) -> None:
    t = time.monotonic()
    assert server.get("b.test", "/slow.html")[0] == 200
    assert time.monotonic() - t >= 0.3


def _fetch_many(srv: ServerProcess, jobs: list[tuple[str, str]]) -> list[int]:
    """Fetch all jobs at once from separate threads/connections."""
    barrier = threading.Barrier(len(jobs))
    out: list[int] = [0] * len(jobs)

    def run(i: int, host: str, path: str) -> None:
        barrier.wait()
        out[i] = srv.get(host, path)[0]

    threads = [threading.Thread(target=run, args=(i, h, p)) for i, (h, p) in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_inflight_counting_under_concurrency() -> None:
    pages = {"a.test": {f"/{i}": Page(str(i)) for i in range(6)},
             "b.test": {f"/{i}": Page(str(i)) for i in range(6)}}
    # 1.5 s of latency: the four threads released together overlap even when one of them
    # waits a second for a CPU on a loaded machine
    with ServerProcess(pages=pages, delay_ms=1500) as srv:
        statuses = _fetch_many(srv, [("a.test", f"/{i}") for i in range(4)]
                               + [("b.test", f"/{i}") for i in range(2)])
        assert statuses == [200] * 6
        srv.get("a.test", "/5")  # alone afterwards
        rows = srv.read_log()
        rep = srv.analyze()
    assert len(rows) == 7
    assert rep["a.test"]["max_inflight"] == 4
    assert rep["b.test"]["max_inflight"] == 2
    assert max(r["inflight_total"] for r in rows) == 6
    assert sorted(r["inflight_host"] for r in rows if r["host"] == "a.test") == [1, 1, 2, 3, 4]
    assert rows[-1]["inflight_host"] == 1 and rows[-1]["inflight_total"] == 1
    assert all(r["duration_ms"] >= 1500 for r in rows)
    assert rep["a.test"]["requests"] == 5 and rep["a.test"]["statuses"] == {200: 5}
    # four arrivals at once on a.test: the smallest arrival gap is far below the latency
    assert rep["a.test"]["min_gap_s"] < 0.3
    assert rep["a.test"]["min_idle_s"] < 0  # overlapping requests


def test_max_inflight_answers_503() -> None:
    pages = {"a.test": {f"/{i}": Page(str(i)) for i in range(3)}}
    cfg = {"defaults": {"delay_ms": 500}, "hosts": {"a.test": {"max_inflight": 1,
                                                               "retry_after": 7}}}
    with ServerProcess(pages=pages, config=cfg) as srv:
        statuses = _fetch_many(srv, [("a.test", f"/{i}") for i in range(3)])
        assert srv.get("a.test", "/0")[0] == 200  # alone again
        rep = srv.analyze()
    assert sorted(statuses) == [200, 503, 503]
    assert rep["a.test"]["statuses"] == {200: 2, 503: 2}


def test_error_rate_is_seeded() -> None:
    pages = {"a.test": {"/": Page("x")}}
    cfg = {"hosts": {"a.test": {"error_rate": 0.5}}}

    def run() -> list[int]:
        with ServerProcess(pages=pages, config=cfg, seed=3) as srv:
            got = [srv.get("a.test", "/")[0] for _ in range(20)]
            assert srv.get("a.test", "/robots.txt")[0] == 200  # robots.txt never fails
            return got

    first = run()
    assert set(first) == {200, 503}
    assert run() == first


def test_latency_jitter_is_seeded_per_host() -> None:
    sites = Sites(pages={"a.test": {"/": Page("x")}, "b.test": {"/": Page("y")}})

    def delays(seed: int, host: str) -> list[float]:
        ws = WebServer(sites, defaults=HostOptions(delay_ms=100, jitter_ms=50), seed=seed)
        return [ws.respond(host, "/", 1).delay_s for _ in range(10)]

    a = delays(1, "a.test")
    assert all(0.1 <= d <= 0.15 for d in a) and len(set(a)) == 10
    assert delays(1, "a.test") == a
    assert delays(2, "a.test") != a
    assert delays(1, "b.test") != a


def test_latency_is_observed_by_clients() -> None:
    cfg = {"hosts": {"slow.test": {"delay_ms": 250, "jitter_ms": 100}}}
    pages = {"slow.test": {"/": Page("s")}, "fast.test": {"/": Page("f")}}
    with ServerProcess(pages=pages, config=cfg) as srv:
        t = time.monotonic()
        srv.get("slow.test", "/")
        slow = time.monotonic() - t
        srv.get("fast.test", "/")
        rows = {r["host"]: r for r in srv.read_log()}
    # lower bounds only: a loaded machine can make any request slow, never a delayed one fast
    assert slow >= 0.25 and rows["slow.test"]["duration_ms"] >= 250
    # the fast host gets no injected delay: its server-side time stays under the slow host's
    # minimum (its wall time on the client jitters under load and is not asserted)
    assert rows["fast.test"]["duration_ms"] < 250


def test_analyze_politeness_report(tmp_path: Path) -> None:
    """analyze() on a hand-written log: gaps, idle time, robots order, disallowed fetches."""
    log = tmp_path / "access.log"
    lines = ["#fields\t" + "\t".join(LOG_FIELDS)]

    def row(t: float, host: str, path: str, status: int = 200, dur: float = 100.0,
            inflight: int = 1) -> None:
        lines.append("\t".join(map(str, [
            "2026-01-01T00:00:00.000Z", f"{t:.6f}", host, "GET", path, status, 10, inflight,
            inflight, dur, "127.0.0.1:1", "bot/1"])))

    row(100.0, "x.test", "/robots.txt")
    row(101.0, "x.test", "/a")
    row(103.5, "x.test", "/private/b", status=404)
    row(100.2, "y.test", "/a", inflight=1, dur=500)
    row(100.3, "y.test", "/robots.txt", inflight=2)
    log.write_text("\n".join(lines) + "\n")
    rep = analyze(log, robots={"x.test": "User-agent: *\nDisallow: /private/\n"})
    x, y = rep["x.test"], rep["y.test"]
    assert x["requests"] == 3 and x["statuses"] == {200: 2, 404: 1}
    assert x["robots_first"] is True and x["robots_fetches"] == 1
    assert x["min_gap_s"] == pytest.approx(1.0)
    assert x["median_gap_s"] == pytest.approx(2.5)
    assert x["min_idle_s"] == pytest.approx(0.9)
    assert x["disallowed_fetches"] == 1
    assert y["robots_first"] is False and y["max_inflight"] == 2
    assert y["min_idle_s"] == pytest.approx(-0.4)
    assert y["disallowed_fetches"] == 0
    assert len(read_log(log)) == 5
    assert "disallowed_fetches" not in analyze(log)["x.test"]


def test_windows_rebuilt_from_the_log_never_overlap_back_to_back_requests(tmp_path: Path) -> None:
    """A request's window is its arrival plus its logged duration, so the duration is logged
    to the microsecond like the arrival: rounded to 0.1 ms it could end a window up to 50 us
    after the response went out, past the next request's arrival on a fast loopback (the
    tests' in-flight counts and analyze's idle times would show an overlap never made)."""
    srv = WebServer(Sites(pages={"a.test": {"/": Page("x")}}), log_path=tmp_path / "a.log")
    t0 = 1_700_000_000.0
    # back to back: the response went out 60 us after the arrival, the next arrived 20 us later
    srv.log(t0, "a.test", "GET", "/1", 200, 1, 1, 1, "c", "ua", t_end=t0 + 60e-6)
    srv.log(t0 + 80e-6, "a.test", "GET", "/2", 200, 1, 1, 1, "c", "ua", t_end=t0 + 150e-6)
    srv.stop()
    first, second = read_log(tmp_path / "a.log")
    assert first["time_epoch"] + first["duration_ms"] / 1000 <= second["time_epoch"]
    assert analyze(tmp_path / "a.log")["a.test"]["min_idle_s"] > 0


def test_cli_port_file_and_sigterm(tmp_path: Path, tree: Path) -> None:
    """The CLI: port 0 -> port file, requests logged, SIGTERM stops it cleanly."""
    port_file, log = tmp_path / "port", tmp_path / "log.tsv"
    cfg = tmp_path / "hosts.json"
    cfg.write_text(json.dumps({"hosts": {"docs.test": {"robots": "User-agent: *\nAllow: /\n"}}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl.demo.webserver", "--root", str(tree), "--port", "0",
         "--port-file", str(port_file), "--log", str(log), "--config", str(cfg)],
        cwd=Path(__file__).resolve().parents[2], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.02)
        port = int(port_file.read_text())
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "http://docs.test/robots.txt")
        assert conn.getresponse().read() == b"User-agent: *\nAllow: /\n"
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        if proc.stderr:
            proc.stderr.close()
    rows = read_log(log)
    assert [(r["host"], r["path"], r["status"]) for r in rows] == [
        ("docs.test", "/robots.txt", 200)]
    out = subprocess.run(
        [sys.executable, "-m", "focuscrawl.demo.webserver", "--analyze", str(log), "--root",
         str(tree)], cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True,
        check=True, timeout=60)
    rep = json.loads(out.stdout)["docs.test"]
    assert (rep["requests"], rep["robots_first"], rep["disallowed_fetches"]) == (1, True, 0)


def test_startup_failure_is_reported(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="site root"):
        ServerProcess(root=tmp_path / "missing").start()


def test_log_is_kept_after_stop_without_log_path() -> None:
    srv = ServerProcess(pages={"a.test": {"/": Page("x")}}).start()
    try:
        assert srv.get("a.test", "/")[0] == 200
    finally:
        srv.stop()
    assert [r["path"] for r in srv.read_log()] == ["/"]
    assert not Path(srv.log_path).exists()
