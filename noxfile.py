"""The Scrapy matrix: focuscrawl's unit tests and its tests as a plugin in another Scrapy
project, once for each Scrapy release pyproject.toml declares.

    nox -s "scrapy(2.14)"         # one release
    nox -s scrapy                 # every release, oldest first
    nox -t oldest                 # the oldest (.ci/run; the newest is .venv's whole suite)
    nox -l                        # the sessions

Each session is a virtualenv under ``.nox/`` with the project and that Scrapy release; uv
creates and fills it (fast, and from the cache ``scripts/setup.sh`` filled), and a second run
reuses it.  The tests it runs: everything under ``tests/unit`` and the integration tests
marked ``third_party`` (focuscrawl's add-on, scheduler or priority queue alone in a bare Scrapy
project, and the kill -9 test of the add-on); ``.ci/run`` runs the oldest and the newest
release.
"""

from __future__ import annotations

import os

import nox

# the sessions' packages with their bytecode: uv installs without it and, where
# PYTHONDONTWRITEBYTECODE is set, every crawl a test starts would compile them from source again
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")

#: the supported releases, oldest first; keep in step with pyproject.toml's ``scrapy`` range
SCRAPY = ["2.14", "2.15", "2.16", "2.17", "2.18", "2.19"]

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["scrapy", "release"]


def _release(version: str) -> object:
    tags = ["oldest"] * (version == SCRAPY[0]) + ["newest"] * (version == SCRAPY[-1])
    return nox.param(version, id=version, tags=tags)


@nox.session
@nox.parametrize("scrapy", [_release(v) for v in SCRAPY])
def scrapy(session: nox.Session, scrapy: str) -> None:
    session.install("-e", ".[test,eval,distributed]", f"scrapy=={scrapy}.*")
    session.run("python", "-c", "import scrapy; print('Scrapy', scrapy.__version__)")
    # arguments after ``--`` go to pytest (``nox -s "scrapy(2.14)" -- -n 2 -x``)
    session.run("python", "-m", "pytest", "-q", "-n", "4", "--dist", "worksteal",
                "-m", "unit or third_party", "tests/unit", "tests/integration", *session.posargs)


PYTEST_INI = """[pytest]
testpaths = tests
pythonpath = .
addopts = -p no:cacheprovider --reactor=asyncio
markers =
    unit: a test under tests/unit
    third_party: focuscrawl in another Scrapy project
"""


@nox.session
@nox.parametrize("dist", ["wheel", "sdist"])
def release(session: nox.Session, dist: str) -> None:
    """``python -m build``: the wheel or the sdist, installed into a clean virtualenv, passes
    the third-party tests.  They run in a copy of the project's own files (tests, settings,
    spiders) without the library's source, so the installed focuscrawl is the one tested."""
    import shutil
    import zipfile
    from pathlib import Path

    tmp = Path(session.create_tmp()).resolve()
    out, work = tmp / "dist", tmp / "project"
    for path in (out, work):
        shutil.rmtree(path, ignore_errors=True)
    session.install("build[uv]")
    session.run("python", "-m", "build", "--installer", "uv", "--outdir", str(out), ".")
    wheel = next(out.glob("*.whl"))
    with zipfile.ZipFile(wheel) as whl:
        shipped = [n for n in whl.namelist() if n.startswith("focuscrawl/demo/site/")]
    if shipped:
        session.error(f"the wheel ships the demo web ({len(shipped)} files): it is built on use")
    artifact = wheel if dist == "wheel" else next(out.glob("*.tar.gz"))
    session.install(f"focuscrawl[test,eval,distributed] @ {artifact.as_uri()}")
    for name in ("tests", "settings", "spiders"):
        shutil.copytree(name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy("scrapy.cfg", work)
    (work / "pytest.ini").write_text(PYTEST_INI)
    session.chdir(work)
    session.run("python", "-c", "import focuscrawl, sys; "
                "assert 'site-packages' in focuscrawl.__file__, focuscrawl.__file__; "
                "print('focuscrawl', focuscrawl.__version__, 'from', focuscrawl.__file__)")
    session.run("python", "-m", "pytest", "-q", "-n", "4", "--dist", "worksteal",
                "-m", "third_party", "tests/integration", *session.posargs)
