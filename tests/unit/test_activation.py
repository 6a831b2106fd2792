"""One activation path: the project's settings enable the add-on and hold only their own choices.

The project's effective settings (after Scrapy has loaded the add-ons: every setting, dicts and
component dicts included) equal those of a bare third-party project that enables the add-on and
makes the same choices of its own -- so nothing focuscrawl needs (the crash-safe feeds, the
download handlers, a component, a ``FOCUS_*`` default) can live in the project alone and be
missing in someone else's.  The same for the distributed mode, and for a Scrapyd job that names
only the distributed add-on in ``-s ADDONS``.
"""

from __future__ import annotations

import importlib
from typing import Any

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from focuscrawl import config
from focuscrawl.seam.addon import focus_defaults
from spiders.topic import TopicSpider

ADDON = "focuscrawl.addon.FocusCrawl"
DISTRIBUTED = "focuscrawl.distributed.addon.Distributed"
#: what a project created by ``scrapy startproject`` names at least
IDENTITY = ("BOT_NAME", "SPIDER_MODULES", "NEWSPIDER_MODULE")
#: the project's own choices, any Scrapy project's to make; nothing focuscrawl needs
OWN = ("USER_AGENT", "TELNETCONSOLE_ENABLED", "REMOTE_CONTROL_ENABLED", "TWISTED_REACTOR",
       "COOKIES_ENABLED", "RETRY_TIMES", "REDIRECT_MAX_TIMES", "LOG_LEVEL",
       "CONCURRENT_REQUESTS", "FEED_EXPORT_ENCODING", "COMMANDS_MODULE", "CONCURRENT_ITEMS")


class ThirdPartySpider(Spider):
    name = "theirs"


def module_settings(name: str) -> dict[str, Any]:
    module = importlib.import_module(name)
    return {n: getattr(module, n) for n in dir(module) if n.isupper()}


def effective(values: dict[str, Any], spidercls: type[Spider] = TopicSpider) -> dict[str, Any]:
    """Every setting of a crawl of ``spidercls`` with these project settings, once Scrapy has
    applied the spider's and the add-ons' settings, as plain values (dicts included)."""
    settings = Settings()
    settings.setdict(values, priority="project")
    crawler = Crawler(spidercls, settings)
    crawler.addons.load_settings(crawler.settings)
    values = crawler.settings.copy_to_dict()
    for name in config.COMPONENTS:  # paths and classes alike (the add-on adds classes)
        values[name] = keys(crawler.settings.getdict(name))
    return values


def keys(component_dict: Any) -> dict[Any, Any]:
    return {load_object(k) if isinstance(k, str) else k: v for k, v in component_dict.items()}


def test_the_project_settings_name_the_addon_and_their_own_choices_only() -> None:
    project = module_settings("settings")
    assert project["ADDONS"] == {ADDON: 0}
    assert set(project) == {"ADDONS", *IDENTITY, *OWN}
    assert not set(OWN) & set(focus_defaults())  # nothing the add-on applies is overridden


def test_the_project_is_a_bare_project_with_the_addon() -> None:
    project = module_settings("settings")
    bare = {"ADDONS": {ADDON: 0}, **{n: project[n] for n in (*IDENTITY, *OWN)}}
    ours, theirs = effective(project), effective(bare)
    assert ours == theirs
    # and what the add-on gives is there, dicts included, as config declares it
    for name, value in focus_defaults().items():
        if name in config.COMPONENTS:
            assert keys(value).items() <= ours[name].items(), name
        elif isinstance(value, dict):
            assert value.items() <= ours[name].items(), name
        else:
            assert ours[name] == value, name
    assert ours["FEEDS"] == {config.default("FOCUS_DEFAULT_FEED"): {"format": "jsonlines"}}


def test_a_third_party_spider_gets_the_same_focuscrawl() -> None:
    """Another project's own spider: the same settings, but no default feed it did not ask for."""
    project = module_settings("settings")
    ours = effective(project)
    bare = effective({"ADDONS": {ADDON: 0}, **{n: project[n] for n in (*IDENTITY, *OWN)}},
                     ThirdPartySpider)
    assert bare.pop("FEEDS") == {}
    assert {k: v for k, v in ours.items() if k != "FEEDS"} == bare


def test_the_differences_from_a_bare_project_are_the_projects_own_choices() -> None:
    project = module_settings("settings")
    ours = effective(project)
    bare = effective({"ADDONS": {ADDON: 0}, **{n: project[n] for n in IDENTITY}})
    differ = {name for name in ours.keys() | bare.keys() if ours.get(name) != bare.get(name)}
    assert differ <= set(OWN), differ - set(OWN)


def test_the_distributed_settings_are_the_distributed_addon() -> None:
    project = module_settings("settings")
    distributed = module_settings("settings.distributed")
    assert distributed["ADDONS"] == {ADDON: 0, DISTRIBUTED: 10}
    assert {n: v for n, v in distributed.items() if n != "ADDONS"} == {
        n: v for n, v in project.items() if n != "ADDONS"}
    ours = effective(distributed)
    own = {n: project[n] for n in (*IDENTITY, *OWN)}
    assert ours == effective({"ADDONS": {ADDON: 0, DISTRIBUTED: 10}, **own})
    # a Scrapyd job's -s ADDONS names the distributed add-on alone: the same crawl
    scrapyd = effective({**own, "ADDONS": {DISTRIBUTED: 10}})
    assert scrapyd.pop("ADDONS") == {DISTRIBUTED: 10}
    assert {k: v for k, v in ours.items() if k != "ADDONS"} == scrapyd
    for name, value in config.distributed_defaults().items():
        assert ours[name] == value, name
    assert ours["FEEDS"] == {config.OPTIONS["FOCUS_DEFAULT_FEED"].distributed:
                             {"format": "jsonlines"}}
