"""Deploy to a real Scrapyd and run a ``topic`` crawl as a job, as docs/scrapyd-and-rendering.md
tells a user to: a password-protected ``scrapyd`` started from its own directory and config,
``scrapyd-deploy`` run in the project (credentials from ``~/.netrc``), ``schedule.json`` with
string arguments, ``listjobs.json`` until the job is finished, and the JSON lines in items_dir.

The project is copied to a temporary directory first, its scrapy.cfg pointed at this test's
Scrapyd port: scrapyd-deploy builds the egg where scrapy.cfg is, and must not do it in the tree.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest

from focuscrawl.demo.webserver import Page, ServerProcess

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
USER, PASSWORD = "crawler", "s3cret-for-tests"
PROJECT_FILES = ("focuscrawl", "spiders", "settings", "setup.py", "pyproject.toml", "README.md",
                 "scrapy.cfg")


def page(title: str, text: str, links: tuple[tuple[str, str], ...] = ()) -> Page:
    anchors = " ".join(f'<a href="{href}">{anchor}</a>' for href, anchor in links)
    return Page(f"<html><head><title>{title}</title></head>"
                f"<body><p>{text}</p>{anchors}</body></html>")


SITE = {"hub.test": {
    "/": page("Hub", "A zeppelin museum and a kitchen.",
              (("/cooking.html", "kitchen"), ("/airships.html", "hangar"))),
    "/cooking.html": page("Cooking", "Bread, soup and pasta recipes.",
                          (("/bread.html", "bread"), ("/soup.html", "soup"))),
    "/airships.html": page("Airships", "zeppelin airship zeppelin rigid airship history",
                           (("/hindenburg.html", "LZ 129"), ("/graf.html", "LZ 127"))),
    "/bread.html": page("Bread", "Flour, water, salt and yeast."),
    "/soup.html": page("Soup", "Leek and potato soup."),
    "/hindenburg.html": page("LZ 129", "The zeppelin LZ 129 airship."),
    "/graf.html": page("LZ 127", "The zeppelin LZ 127 airship flew around the world."),
}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Scrapyd:
    """A scrapyd process in its own directory, reached over HTTP with basic auth."""

    def __init__(self, home: Path) -> None:
        self.dir = home / "scrapyd"
        self.dir.mkdir(parents=True)
        self.home = home
        for _ in range(20):  # the free port may be taken before scrapyd binds it: try another
            if self._start():
                return
        raise RuntimeError("scrapyd did not start: " + self.output())

    def _start(self) -> bool:
        """Start scrapyd on a free port; False if it exited at once (its port was taken)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        (self.dir / "scrapyd.conf").write_text(
            "[scrapyd]\n"
            "bind_address = 127.0.0.1\n"
            f"http_port = {self.port}\n"
            f"username = {USER}\n"
            f"password = {PASSWORD}\n"
            "eggs_dir = eggs\nlogs_dir = logs\nitems_dir = items\ndbs_dir = dbs\n"
            "jobs_to_keep = 5\n"
            "poll_interval = 0.2\n"  # pick a scheduled job up quickly (default 5 s)
        )
        self.log = open(self.dir / "scrapyd.out", "wb")  # noqa: SIM115 - closed in stop()
        env = {k: v for k, v in os.environ.items()  # the test site is reached directly
               if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
        env["HOME"] = str(self.home)
        self.proc = subprocess.Popen([str(BIN / "scrapyd")], cwd=self.dir, env=env,
                                     stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.get("daemonstatus.json")
                return True
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None:
                    self.log.close()
                    if "Address already in use" in self.output():
                        return False
                    raise RuntimeError("scrapyd did not start: " + self.output()) from None
                if time.monotonic() > deadline:
                    raise RuntimeError("scrapyd did not start: " + self.output()) from None
                time.sleep(0.1)

    def output(self) -> str:
        return (self.dir / "scrapyd.out").read_text("utf-8", "replace")[-3000:]

    def request(self, path: str, data: list[tuple[str, str]] | None = None, *,
                auth: bool = True) -> dict:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(self.url + path, data=body)
        if auth:
            token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            req.add_header("Authorization", f"Basic {token}")
        # listspiders.json runs `scrapy list` from the egg: seconds on a loaded machine
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())

    def get(self, path: str, **kwargs: object) -> dict:
        return self.request(path, **kwargs)  # type: ignore[arg-type]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture
def scrapyd(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    daemon = Scrapyd(home)
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def site():
    with ServerProcess(pages=SITE, bind_hosts=True) as srv:
        yield srv


def copy_project(dest: Path, scrapyd_url: str) -> Path:
    """The project as a user has it, with the deploy target's url moved to the test's port."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in PROJECT_FILES:
        src = ROOT / name
        if name == "README.md" and not src.exists():  # pyproject's readme, not yet written
            (dest / name).write_text("focuscrawl\n", "utf-8")
        elif src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    cfg = dest / "scrapy.cfg"
    text, count = re.subn(r"(?m)^url\s*=.*$", f"url = {scrapyd_url}", cfg.read_text("utf-8"))
    assert count == 1, "scrapy.cfg should have one deploy url"
    cfg.write_text(text, "utf-8")
    return dest


def test_scrapyd_requires_the_password(scrapyd: Scrapyd) -> None:
    with pytest.raises(urllib.error.HTTPError) as err:
        scrapyd.get("daemonstatus.json", auth=False)
    assert err.value.code == 401
    assert scrapyd.get("daemonstatus.json")["status"] == "ok"


def test_deploy_schedule_and_read_the_items(scrapyd: Scrapyd, site: ServerProcess,
                                            tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project", scrapyd.url)
    netrc = scrapyd.home / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login {USER} password {PASSWORD}\n")
    netrc.chmod(0o600)
    env = {**os.environ, "HOME": str(scrapyd.home)}
    deploy = subprocess.run([str(BIN / "scrapyd-deploy")], cwd=project, env=env,
                            capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert deploy.returncode == 0, deploy.stderr + deploy.stdout + scrapyd.output()
    answer = json.loads(deploy.stdout)
    assert answer["status"] == "ok" and answer["project"] == "focuscrawl"
    assert answer["spiders"] >= 1
    assert "topic" in scrapyd.get("listspiders.json?project=focuscrawl")["spiders"]
    eggs = list((scrapyd.dir / "eggs" / "focuscrawl").glob("*.egg"))
    assert len(eggs) == 1
    with zipfile.ZipFile(eggs[0]) as egg:
        names = set(egg.namelist())
        entry_points = egg.read("EGG-INFO/entry_points.txt").decode()
    assert {"focuscrawl/seam/scheduler.py", "spiders/topic.py", "settings/__init__.py"} <= names
    assert not any(n.startswith("tests/") for n in names)
    assert re.search(r"(?m)^settings = settings$", entry_points)

    seed = site.direct_url("hub.test", "/")
    scheduled = scrapyd.request("schedule.json", [
        ("project", "focuscrawl"), ("spider", "topic"),
        ("keywords", "zeppelin, airship"), ("seeds", seed), ("strategy", "best-first"),
        ("max_pages", "4"),  # a string, as every schedule.json argument
        ("setting", "FOCUS_DELAY=0"), ("setting", "LOG_LEVEL=INFO"),
    ])
    assert scheduled["status"] == "ok", scheduled
    job = scheduled["jobid"]

    deadline = time.monotonic() + 60
    while True:
        jobs = scrapyd.get("listjobs.json?project=focuscrawl")
        if any(j["id"] == job for j in jobs["finished"]):
            break
        assert time.monotonic() < deadline, f"job not finished: {jobs}\n{scrapyd.output()}"
        time.sleep(0.2)

    log = (scrapyd.dir / "logs" / "focuscrawl" / "topic" / f"{job}.log").read_text("utf-8")
    assert "Spider closed (finished)" in log, log[-3000:]
    assert "Focus frontier: best-first, MAX_PAGES=4" in log  # string arguments, parsed
    items_file = scrapyd.dir / "items" / "focuscrawl" / "topic" / f"{job}.jl"
    items = [json.loads(line) for line in items_file.read_text("utf-8").splitlines()]
    paths = [urllib.parse.urlsplit(i["url"]).path for i in items]
    assert len(items) == 4, paths  # max_pages=4, parsed from the string
    assert paths[0] == "/"
    assert set(paths[1:3]) == {"/cooking.html", "/airships.html"}
    assert paths[3] in ("/hindenburg.html", "/graf.html", "/bread.html", "/soup.html")
    scores = {p: i["score"] for p, i in zip(paths, items, strict=True)}
    assert scores["/airships.html"] > scores["/"] > 0 and scores["/cooking.html"] == 0
    assert [i["order"] for i in items] == [1, 2, 3, 4]
    assert all(i["status"] == 200 and i["title"] for i in items)
