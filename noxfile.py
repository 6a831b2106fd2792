"""The Scrapy matrix: focuscrawl's unit tests and its tests as a plugin in another Scrapy
project, once for each Scrapy release pyproject.toml declares.

    nox -s "scrapy(2.14)"         # one release
    nox -s scrapy                 # every release, oldest first
    nox -l                        # the sessions

Each session is a virtualenv under ``.nox/`` with the project and that Scrapy release; uv
creates and fills it (fast, and from the cache ``scripts/setup.sh`` filled), and a second run
reuses it.  The tests it runs: everything under ``tests/unit`` and the integration tests
marked ``third_party`` (focuscrawl's add-on, scheduler or priority queue alone in a bare Scrapy
project, and the kill -9 test of the add-on); ``.ci/run`` runs the oldest and the newest
release.
"""

from __future__ import annotations

import nox

#: the supported releases, oldest first; keep in step with pyproject.toml's ``scrapy`` range
SCRAPY = ["2.14", "2.15", "2.16", "2.17", "2.18", "2.19"]

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["scrapy"]


@nox.session(tags=["matrix"])
@nox.parametrize("scrapy", SCRAPY, ids=SCRAPY)
def scrapy(session: nox.Session, scrapy: str) -> None:
    session.install("-e", ".[test,eval,distributed]", f"scrapy=={scrapy}.*")
    session.run("python", "-c", "import scrapy; print('Scrapy', scrapy.__version__)")
    # arguments after ``--`` go to pytest (``nox -s "scrapy(2.14)" -- -n 2 -x``)
    session.run("python", "-m", "pytest", "-q", "-n", "4", "--dist", "worksteal",
                "-m", "unit or third_party", "tests/unit", "tests/integration", *session.posargs)
