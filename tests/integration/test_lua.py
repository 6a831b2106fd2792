"""The Redis frontier's Lua: every script compiles in a real redis-server, every file is used,
a script error names its .lua file and line, and no Lua is left in Python."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from redis.exceptions import ResponseError

import focuscrawl
from focuscrawl.distributed import scripts
from focuscrawl.distributed.connection import RedisLink
from tests.support.redis_server import redis_server_fixture  # noqa: F401 - the redis_server fixture

LUA = files("focuscrawl.distributed") / "lua"


def lua_files() -> set[str]:
    root = Path(str(LUA))
    return {p.relative_to(root).as_posix() for p in root.rglob("*.lua")}


@pytest.mark.parametrize("name", sorted(scripts.LAYOUT))
def test_every_script_compiles_in_redis(redis_server, name):
    text = getattr(scripts, name)
    client = redis_server.client()
    sha = client.script_load(text)  # a syntax error is a ResponseError here
    assert client.script_exists(sha) == [True]
    assert scripts.BY_SHA[sha] == name


def test_every_lua_file_is_in_a_script_and_every_script_starts_with_the_prelude():
    used = {part.path for parts in scripts.LAYOUT.values() for part in parts}
    assert used == lua_files()
    assert scripts.PRELUDE[0] == "prelude.lua"
    # the frontier's scripts; the standalone ones (the near-duplicate index, the revisit
    # schedule) are one file each, their keys in slots of their own
    framed = {n: parts for n, parts in scripts.LAYOUT.items() if n not in scripts.STANDALONE}
    assert all(len(scripts.LAYOUT[n]) == 1 for n in scripts.STANDALONE)
    assert all(tuple(p.path for p in parts[:len(scripts.PRELUDE)]) == scripts.PRELUDE
               for parts in framed.values())
    # every script but INIT refuses to run on a crawl whose configuration is gone
    assert [n for n, parts in framed.items()
            if parts[len(scripts.PRELUDE)].path != "check.lua"] == ["INIT"]


def test_the_header_line_names_each_part_where_it_starts():
    text = scripts.POP.splitlines()
    for part in scripts.LAYOUT["POP"]:
        file_lines = (LUA / part.path).read_text(encoding="utf-8").splitlines()
        assert f"line {part.line} = {part.path}:{part.file_line}" in text[0]
        assert text[part.line - 1] == file_lines[part.file_line - 1]
        assert scripts.locate("POP", part.line) == (part.path, part.file_line)


@pytest.mark.parametrize(("name", "args", "code"), [
    # a Crawl-delay that is no number fails in the prelude's set_crawl_delay
    ("CRAWL_DELAY", ["h"], "math.max(0, ms)"),
    # a hold that is no number fails in the script's own file
    ("HOST_HOLD", ["h"], "now() + tonumber(ARGV[3])"),
])
def test_a_script_error_names_its_lua_file_and_line(redis_server, name, args, code):
    client = redis_server.client()
    prefix = f"err{name}:"
    client.register_script(scripts.INIT)(args=[prefix, "strategy", "best-first"])
    script = client.register_script(getattr(scripts, name))
    link = RedisLink(redis_server.url)
    with pytest.raises(ResponseError) as raised:
        link.call(script, [], [prefix, *args, "not a number"])
    message = str(raised.value)
    assert f"[{name}: lua/" in message
    path, line = message.rsplit("[", 1)[1].split(": lua/")[1].rstrip("]").split(":")
    assert code in (LUA / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]


def test_no_lua_in_python():
    package = Path(focuscrawl.__file__).parent
    offenders = [str(p.relative_to(package)) for p in package.rglob("*.py")
                 if "redis.call" in p.read_text(encoding="utf-8")]
    assert offenders == []
