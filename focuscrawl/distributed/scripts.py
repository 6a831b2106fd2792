"""The Lua scripts of the Redis frontier: every cluster-wide decision is one atomic script.

The Lua lives in ``lua/*.lua`` (package data), one file per script, grouped by concern
(``frontier/``, ``leases/``, ``workers/``, ``hosts/``, ``robots/``); the key layout is at the top
of ``lua/prelude.lua``.  Each script sent to Redis is the prelude (``prelude.lua`` then the
files of ``prelude/``, in the fixed order of :data:`PRELUDE`: each may use what the earlier ones
define) + ``check.lua`` + its own file (INIT has no check: it writes ``cfg``); ADD and ADD_MANY
also take the fragment ``frontier/add_link.lua``, HOST_FINISH and DOWNLOADED
``hosts/finish_slot.lua``.  NEARDUP_ADD (``neardup/add.lua``) is sent alone: the
near-duplicate index's keys are in a slot of their own.  A file's leading comment block (its
documentation, up to the first blank line) is not sent, so editing it changes no script.

Line numbers: the first line of each script sent is a comment naming where each part starts,
e.g. ``-- POP: line 2 = prelude.lua:57, ..., line 418 = check.lua:6,
line 420 = frontier/pop.lua:7``: a Redis error at ``user_script:442`` is
``frontier/pop.lua:29``.  :func:`locate` does this, and :func:`explain` appends it to an error
message (``RedisLink`` does for every script error).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib.resources import files

_LUA = files(__package__) / "lua"


@dataclass(frozen=True)
class Part:
    """One file in an assembled script: script line ``line`` is the file's line ``file_line``."""

    path: str
    line: int
    file_line: int


#: the prelude's files, in order: configuration and counters, the seen-set, Cho's link graph,
#: queues and records, workers and servers, leases
PRELUDE = ("prelude.lua", "prelude/seen.lua", "prelude/graph.lua", "prelude/queues.lua",
           "prelude/hosts.lua", "prelude/leases.lua")

#: script name -> its parts, in order (what :func:`locate` reads)
LAYOUT: dict[str, tuple[Part, ...]] = {}
#: SHA1 of a script's text -> its name (Redis names a failing script by it: ``f_<sha>``)
BY_SHA: dict[str, str] = {}
#: the scripts sent without the prelude (their keys are in slots of their own)
STANDALONE: set[str] = set()


def _code(path: str) -> tuple[str, int]:
    """The file's code (its leading comment block and the blank line after it dropped) and
    the file line the code starts on."""
    text = (_LUA / path).read_text(encoding="utf-8")
    if not text.startswith("--"):
        return text, 1
    doc, sep, code = text.partition("\n\n")
    if not sep or not all(line.startswith("--") for line in doc.splitlines()):
        raise ValueError(f"lua/{path}: its leading comment block must end with a blank line")
    return code, doc.count("\n") + 3


def _script(name: str, *paths: str) -> str:
    """The script ``name``: the prelude, then ``paths``; each part after a blank line (the
    first after the header comment)."""
    chunks: list[str] = []
    parts: list[Part] = []
    line = 2
    for path in (*PRELUDE, *paths):
        code, first = _code(path)
        parts.append(Part(path, line, first))
        chunks.append("\n" + code)
        line += code.count("\n") + 1
    header = f"-- {name}: " + ", ".join(f"line {p.line} = {p.path}:{p.file_line}" for p in parts)
    text = header + "".join(chunks)
    LAYOUT[name] = tuple(parts)
    BY_SHA[hashlib.sha1(text.encode()).hexdigest()] = name
    return text


def _standalone(name: str, path: str) -> str:
    """The script ``name``: ``path`` alone, without the frontier's prelude (its keys live in a
    slot of their own, where the crawl's ``cfg`` is not)."""
    code, first = _code(path)
    text = f"-- {name}: line 2 = {path}:{first}\n" + code
    LAYOUT[name] = (Part(path, 2, first),)
    STANDALONE.add(name)
    BY_SHA[hashlib.sha1(text.encode()).hexdigest()] = name
    return text


def locate(name: str, line: int) -> tuple[str, int]:
    """The file and line of the script ``name``'s line ``line`` (as Redis errors give it)."""
    parts = LAYOUT[name]
    if line < parts[0].line:
        return f"{name} header", line
    part = max((p for p in parts if p.line <= line), key=lambda p: p.line)
    return part.path, part.file_line + line - part.line


# Redis 7: "user_script:3: ... script: <sha>, on @user_script:3."; Redis 6: "... (call to
# f_<sha>): @user_script:3: ..."
_SHA = re.compile(r"(?:script: |f_)([0-9a-f]{40})")
_LINE = re.compile(r"user_script:(\d+)")


def explain(message: str) -> str:
    """A Redis script error with the file and line it comes from appended, when the message
    names one of these scripts (by its SHA1) and a line."""
    sha, line = _SHA.search(message), _LINE.search(message)
    name = BY_SHA.get(sha[1]) if sha else None
    if name is None or line is None:
        return message
    path, file_line = locate(name, int(line[1]))
    return f"{message} [{name}: lua/{path}:{file_line}]"


INIT = _script("INIT", "init.lua")
ADD = _script("ADD", "check.lua", "frontier/add_link.lua", "frontier/add.lua")
ADD_MANY = _script("ADD_MANY", "check.lua", "frontier/add_link.lua", "frontier/add_many.lua")
CRAWLED = _script("CRAWLED", "check.lua", "frontier/crawled.lua")
POP = _script("POP", "check.lua", "frontier/pop.lua")
DOWNLOADED = _script("DOWNLOADED", "check.lua", "hosts/finish_slot.lua", "leases/downloaded.lua")
SETTLE = _script("SETTLE", "check.lua", "leases/settle.lua")
RELEASE = _script("RELEASE", "check.lua", "leases/release.lua")
ORPHANS = _script("ORPHANS", "check.lua", "leases/orphans.lua")
HEARTBEAT = _script("HEARTBEAT", "check.lua", "workers/heartbeat.lua")
REAP = _script("REAP", "check.lua", "workers/reap.lua")
LEAVE = _script("LEAVE", "check.lua", "workers/leave.lua")
HOST_START = _script("HOST_START", "check.lua", "hosts/host_start.lua")
HOST_FINISH = _script("HOST_FINISH", "check.lua", "hosts/finish_slot.lua", "hosts/host_finish.lua")
CRAWL_DELAY = _script("CRAWL_DELAY", "check.lua", "hosts/crawl_delay.lua")
HOST_HOLD = _script("HOST_HOLD", "check.lua", "hosts/host_hold.lua")
ROBOTS_CLAIM = _script("ROBOTS_CLAIM", "check.lua", "robots/claim.lua")
ROBOTS_RENEW = _script("ROBOTS_RENEW", "check.lua", "robots/renew.lua")
ROBOTS_STORE = _script("ROBOTS_STORE", "check.lua", "robots/store.lua")
STATUS = _script("STATUS", "check.lua", "status.lua")
# Redis Cluster only (``sharded.py``): MAX_PAGES across shards, on the crawl's global slot
GRANT = _script("GRANT", "check.lua", "budget/grant.lua")
SPEND = _script("SPEND", "check.lua", "budget/spend.lua")
# the near-duplicate index (``neardup.py``), in its own slot
NEARDUP_ADD = _standalone("NEARDUP_ADD", "neardup/add.lua")
# a continuous crawl's revisit schedule (``revisits.py``), each shard's keys in their own slot
REVISIT_CLAIM = _standalone("REVISIT_CLAIM", "revisit/claim.lua")
REVISIT_REPORT = _standalone("REVISIT_REPORT", "revisit/report.lua")
REVISIT_REAP = _standalone("REVISIT_REAP", "revisit/reap.lua")
REVISIT_RESCHEDULE = _standalone("REVISIT_RESCHEDULE", "revisit/reschedule.lua")
