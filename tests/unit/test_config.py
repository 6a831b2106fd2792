"""focuscrawl.config is the one place a setting's default is written.

The source scans fail when a ``FOCUS_*`` default appears anywhere else in focuscrawl/,
settings/ or spiders/ (an inline ``settings.get*("FOCUS_X", default)``, a module-level
``FOCUS_X = literal``, a module-level dict of ``"FOCUS_X": literal``), or when a ``FOCUS_*``
name is used that config does not declare.  docs/settings.md is generated from config.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import BaseSettings, Settings

from focuscrawl import config

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("focuscrawl", "settings", "spiders")
CONFIG = ROOT / "focuscrawl" / "config.py"
NAME = re.compile(r"FOCUS_[A-Z0-9_]+")


def sources() -> list[Path]:
    files = [p for d in SCANNED for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 50
    return files


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


def is_literal(node: ast.AST) -> bool:
    """A value written out (numbers, strings, lists of them, 100 * 1024, None, True)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k) for k in node.keys) and all(
            is_literal(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return is_literal(node.left) and is_literal(node.right)
    if isinstance(node, ast.UnaryOp):
        return is_literal(node.operand)
    return False


def setting_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(
            node.value):
        return node.value
    return None


def test_no_inline_default_for_a_focus_setting() -> None:
    """``settings.get*("FOCUS_X", default)`` (getwithbase too): the default lives in config."""
    found = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.startswith("get") and node.args):
                continue
            name = setting_name(node.args[0])
            if name is None:
                continue
            if len(node.args) > 1 or any(k.arg == "default" for k in node.keywords):
                found.append(f"{where(path, node)} {node.func.attr}({name!r}, ...)")
    assert not found, "defaults written outside focuscrawl/config.py (use config.get):\n" + \
        "\n".join(found)


def test_no_focus_default_assigned_outside_config() -> None:
    """Module level: ``FOCUS_X = literal`` or a dict literal of ``"FOCUS_X": literal``."""
    found = []
    for path in sources():
        if path == CONFIG:
            continue
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
            else:
                continue
            if value is None:
                continue
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any(NAME.fullmatch(n) for n in names) and is_literal(value):
                found.append(f"{where(path, node)} {names[0]} = {ast.unparse(value)[:60]}")
            if isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values, strict=True):
                    name = setting_name(key) if key is not None else None
                    if name and is_literal(item):
                        found.append(f"{where(path, node)} {{{name!r}: {ast.unparse(item)}}}")
    assert not found, "FOCUS_* defaults outside focuscrawl/config.py:\n" + "\n".join(found)


def test_every_focus_name_used_is_declared() -> None:
    used: dict[str, str] = {}
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            name = setting_name(node)
            if name is not None:
                used.setdefault(name, where(path, node))
            if isinstance(node, ast.Name) and NAME.fullmatch(node.id):
                used.setdefault(node.id, where(path, node))
    assert len(used) > 50
    missing = {name: at for name, at in used.items() if name not in config.OPTIONS}
    assert not missing, f"FOCUS_* names not declared in focuscrawl.config: {missing}"


def test_every_declaration_is_complete() -> None:
    for name, option in config.OPTIONS.items():
        assert option.kind in config.KINDS, name
        assert option.doc and "\n" not in option.doc and len(option.doc) <= 200, name
        assert option.group in config.GROUPS, name
        if option.kind in ("bool", "int", "float", "str", "list") and option.default is not None:
            expected = {"bool": bool, "int": int, "float": (int, float), "str": str,
                        "list": list}[option.kind]
            assert isinstance(option.default, expected), name


def test_settings_come_in_two_tiers_and_the_readme_lists_the_user_tier() -> None:
    """The user tier stays short enough to read, and the README's table is exactly it."""
    user = {name for name, option in config.OPTIONS.items() if option.tier == config.USER}
    assert all(option.tier in config.TIERS for option in config.OPTIONS.values())
    assert 10 <= len(user) <= 25, sorted(user)
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Main settings"):]
    table = table[:table.index("\n## ")]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row)}
    assert listed == user, (listed ^ user)
    page = config.markdown()
    main = page[page.index("## Main settings"):page.index("## Advanced settings")]
    assert set(re.findall(r"^\| `([A-Z0-9_]+)`", main, re.M)) == user


def test_get_applies_the_one_default_and_the_type() -> None:
    empty = BaseSettings()  # not even Scrapy's defaults
    for name in config.OPTIONS:
        assert config.get(empty, name) == config.OPTIONS[name].default, name
    given = Settings({  # as -s gives them: strings
        "FOCUS_MAX_PAGES": "12", "FOCUS_DELAY": "0.25", "FOCUS_IDF": "True",
        "FOCUS_FETCH_TYPES": "text/html,text/plain", "FOCUS_SLACK": "0.75",
        "FOCUS_SIBLING_WINDOW": "3", "FOCUS_HUB": "", "FOCUS_BLOCK_PRIVATE": "False",
    })
    assert config.get(given, "FOCUS_MAX_PAGES") == 12
    assert config.get(given, "FOCUS_DELAY") == 0.25
    assert config.get(given, "FOCUS_IDF") is True
    assert config.get(given, "FOCUS_FETCH_TYPES") == ["text/html", "text/plain"]
    assert config.get(given, "FOCUS_SLACK") == 0.75
    assert config.get(given, "FOCUS_SIBLING_WINDOW") == 3
    assert config.get(given, "FOCUS_HUB") is None  # empty: the strategy's own default
    assert config.get(given, "FOCUS_BLOCK_PRIVATE") == "False"  # the middleware parses it
    # a list default is never shared: changing what get returned changes nothing
    config.get(empty, "FOCUS_FETCH_TYPES").append("x")
    assert "x" not in config.OPTIONS["FOCUS_FETCH_TYPES"].default


def test_typed_options_are_read_from_their_settings() -> None:
    classes = (config.PolitenessOptions, config.FilterOptions, config.RobotsOptions,
               config.FetchOptions, config.JournalOptions, config.RedisOptions,
               config.LearnedOptions)
    for cls in classes:
        assert cls.from_settings(Settings()) == cls(), cls  # defaults: the declared ones
        for field in dataclasses.fields(cls):
            assert field.metadata["setting"] in config.OPTIONS
    robots = config.RobotsOptions.from_settings(Settings({"FOCUS_ROBOTSTXT_HOLDS": "5",
                                                          "FOCUS_ROBOTSTXT_OBEY": "false"}))
    assert robots.holds == 5 and robots.obey is False
    fetch = config.FetchOptions.from_settings(Settings({"FOCUS_FETCH_TYPES": ["text/html"]}))
    assert fetch.types == ("text/html",)
    assert config.PolitenessOptions.from_settings(Settings({"FOCUS_DELAY": 2})).as_dict() == {
        "concurrency": 1, "delay": 2.0, "slow_seconds": 5.0, "slow_factor": 2.0,
        "max_delay": 30.0}


def test_the_project_settings_modules_take_only_their_own_defaults_from_config() -> None:
    """Everything else comes from the add-on they enable (tests/unit/test_activation.py)."""
    project = importlib.import_module("settings")
    for name, value in config.project_defaults().items():
        assert getattr(project, name) == value, name
    assert not {n for n in dir(project) if NAME.fullmatch(n)}
    assert not set(config.project_defaults()) & set(config.addon_defaults())


def test_the_addons_apply_config_defaults() -> None:
    from focuscrawl.distributed.addon import DEFAULTS, Distributed
    from focuscrawl.seam.addon import FocusCrawl

    settings = Settings()
    FocusCrawl().update_settings(settings)
    for name, value in config.defaults("addon").items():
        if config.OPTIONS[name].kind == "dict":
            assert value.items() <= settings.getdict(name).items(), name
        else:
            assert settings[name] == value, name
    assert "CONCURRENT_ITEMS" not in config.defaults("addon")  # the project's, not the add-on's
    assert DEFAULTS == config.defaults("distributed")
    Distributed().update_settings(settings)
    assert settings["REDIS_URL"] == config.default("REDIS_URL")
    assert settings["FOCUS_STRATEGY"] == config.OPTIONS["FOCUS_STRATEGY"].distributed


def test_library_constants_agree_with_config() -> None:
    """The core's own parameter defaults (used without Scrapy) are the settings' defaults."""
    from focuscrawl.core.learned import RERANK_BATCH, RERANK_MAX
    from focuscrawl.core.orders import DEFAULT_STRATEGY
    from focuscrawl.seam.records import HTML_TYPES

    assert DEFAULT_STRATEGY == config.default("FOCUS_STRATEGY")
    assert RERANK_MAX == config.default("FOCUS_LEARN_RERANK")
    assert RERANK_BATCH == config.default("FOCUS_LEARN_RERANK_BATCH")
    assert list(HTML_TYPES) == config.default("FOCUS_FETCH_TYPES")


def test_no_constructor_repeats_a_declared_default() -> None:
    """The core's classes, built without Scrapy, take their options' defaults from config: a
    parameter read from a setting has that setting's declared default or none; the learned
    order's options are one LearnedOptions, HostPolicy's one PolitenessOptions."""
    import inspect

    from focuscrawl.core.frontier import HostPolicy, QueueFrontier
    from focuscrawl.core.learned import Learned
    from focuscrawl.core.orders import LEARNED_OPTIONS, STRATEGIES, VALUATIONS
    from focuscrawl.seam.options import FRONTIER_SETTINGS

    made = [QueueFrontier, HostPolicy, *(cls for cls, _ in VALUATIONS.values())]
    drift = []
    for maker in [*(cls.__init__ for cls in made), *STRATEGIES.values()]:
        for p in inspect.signature(maker).parameters.values():
            name = FRONTIER_SETTINGS.get(p.name)
            if name is not None and p.default is not p.empty and \
                    p.default != config.default(name):
                drift.append(f"{maker.__qualname__}({p.name}={p.default!r}) vs {name}")
    assert drift == []
    # the learned order takes no option one by one: one object, the declared defaults
    assert not set(inspect.signature(Learned.__init__).parameters) & LEARNED_OPTIONS
    assert Learned(keywords="x").options == config.LearnedOptions.from_settings(Settings())
    policy = HostPolicy()
    assert (policy.concurrency, policy.delay, policy.slow_seconds, policy.slow_factor,
            policy.max_delay, policy.start_log) == (
        config.default("FOCUS_CONCURRENCY_PER_SERVER"), config.default("FOCUS_DELAY"),
        config.default("FOCUS_SLOW_SECONDS"), config.default("FOCUS_SLOW_FACTOR"),
        config.default("FOCUS_MAX_DELAY"), config.default("FOCUS_START_LOG"))


def test_config_imports_no_scrapy() -> None:
    code = ("import sys, focuscrawl.config as c; c.markdown(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_docs_settings_page_is_generated_from_config() -> None:
    committed = (ROOT / "docs" / "settings.md").read_text("utf-8")
    assert committed == config.markdown(), (
        "docs/settings.md is stale: python -m focuscrawl.config --markdown > docs/settings.md")
    for name in config.OPTIONS:
        assert f"`{name}`" in committed


@pytest.mark.parametrize("argv", [[], ["--html"]])
def test_the_generator_wants_markdown(argv: list[str], capsys) -> None:
    assert config.main(argv) == 2
    assert "usage" in capsys.readouterr().err


# -- packaging ---------------------------------------------------------------------------------
def test_the_library_claims_no_top_level_settings_or_spiders() -> None:
    """pip installs focuscrawl only; the project's settings/spiders go into the Scrapyd egg
    (setup.py's bdist_egg; tests/integration/test_scrapyd.py deploys it)."""
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert include == ["focuscrawl*"]
    assert "scrapy" not in pyproject["project"].get("entry-points", {})


def test_every_package_directory_has_an_init() -> None:
    """A zipped egg (Scrapyd) imports no namespace packages: each directory needs one."""
    missing = [d for top in SCANNED for d in [ROOT / top, *(ROOT / top).rglob("*")]
               if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))
               and not (d / "__init__.py").exists()]
    assert not missing, missing
