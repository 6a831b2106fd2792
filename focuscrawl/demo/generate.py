"""Generate the demo web from text Python itself ships (into :func:`focuscrawl.demo.site_dir`).

    python -m focuscrawl.demo.generate [--out DIR]

Sources: module, class and function docstrings of the standard library (``inspect.getdoc``),
the language-reference topics of ``pydoc_data.topics``, IDLE's NEWS/HISTORY/README files.  The
build is deterministic: the same Python and the same generator give the same bytes, so the site
is built on first use (``focuscrawl.demo.ensure_site``) instead of shipped.  Hosts (see
:data:`focuscrawl.demo.HOSTS`):

* docs      -- /library/<module>.html per module, with member summaries, "see also" links to
               modules its text mentions, a category sidebar; /library/index.html by category.
* tutorial  -- /lessons/<slug>/<n>.html lesson pages quoting full docstrings of a theme's
               functions (five themes match the demo topics), /reference/<topic>.html.
* wiki      -- /wiki/<Category>.html hubs linking into every host, /wiki/<qualname>.html class
               articles; /edit/ pages (duplicates of the articles) are disallowed by robots.txt.
* blog      -- dated posts on one function or class each, tag pages, paginated index; every page
               carries <style>/<script> junk whose words must not count as text.
* news      -- IDLE release notes split into pages, weekly digests linking to posts and docs.
* cookbook  -- the off-topic rest of the web: /recipes/<qualname>.html, one per documented
               tkinter or turtle object that mentions none of the demo topics, chapter hubs.
* links     -- a link aggregator: paginated hub pages of links, most of them to the cookbook.

As on the real web, the on-topic hosts link out to the off-topic ones: every page's header
names all seven sites, and module pages, lessons, articles and posts carry an "Around the web"
box of links to recipes and to the aggregator (chosen by a hash of the page's path).

Redirects are declared in ``<host>/_redirects.json`` (served by focuscrawl.demo.webserver).
"""

from __future__ import annotations

import argparse
import html
import importlib
import inspect
import json
import random
import re
import shutil
import sys
import sysconfig
import textwrap
import warnings
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.demo import HOSTS, SEEDS, TOPICS, site_dir

DOCS, TUT, WIKI, BLOG, NEWS, COOK, LINKS = (
    HOSTS[k] for k in ("docs", "tutorial", "wiki", "blog", "news", "cookbook", "links"))
SITE_NAMES = {DOCS: "Library Docs", TUT: "Python Tutorial", WIKI: "Community Wiki",
              BLOG: "Snake Notes (a blog)", NEWS: "IDLE & Python News",
              COOK: "Tk & Turtle Cookbook", LINKS: "Python Links"}

# ---------------------------------------------------------------------------------- material
CATEGORIES: dict[str, tuple[str, list[str]]] = {
    "Text_processing": ("Text processing", [
        "re", "string", "textwrap", "difflib", "unicodedata", "stringprep", "fnmatch", "shlex",
        "reprlib", "sre_parse"]),
    "Unicode_and_encodings": ("Unicode and encodings", [
        "codecs", "encodings", "encodings.utf_8", "encodings.idna", "locale", "gettext", "io",
        "base64", "binascii", "quopri"]),
    "Networking": ("Networking and sockets", [
        "socket", "ssl", "select", "selectors", "socketserver", "ipaddress", "http.client",
        "http.server", "urllib.request", "urllib.parse", "ftplib", "smtplib", "poplib",
        "imaplib", "xmlrpc.client", "wsgiref.simple_server", "telnetlib"]),
    "Dates_and_times": ("Dates, times and time zones", [
        "datetime", "time", "zoneinfo", "calendar", "email.utils", "_strptime", "sched"]),
    "Concurrency": ("Threads and concurrency", [
        "threading", "_thread", "queue", "concurrent.futures", "multiprocessing",
        "multiprocessing.pool", "asyncio", "contextvars", "subprocess", "signal"]),
    "Data_types": ("Data types and containers", [
        "collections", "collections.abc", "heapq", "bisect", "array", "weakref", "types",
        "copy", "pprint", "enum", "graphlib", "dataclasses"]),
    "Numbers": ("Numbers and mathematics", [
        "math", "cmath", "decimal", "fractions", "random", "statistics", "numbers", "operator"]),
    "Functional": ("Functional programming", ["itertools", "functools", "contextlib"]),
    "Files": ("Files and directories", [
        "pathlib", "os", "os.path", "shutil", "glob", "tempfile", "filecmp", "fileinput", "stat",
        "linecache"]),
    "Data_formats": ("Data formats and persistence", [
        "json", "csv", "configparser", "tomllib", "plistlib", "pickle", "shelve", "dbm",
        "sqlite3", "netrc", "struct"]),
    "Compression": ("Compression and archives", [
        "zlib", "gzip", "bz2", "lzma", "zipfile", "tarfile"]),
    "Internet_data": ("Email, HTML and XML", [
        "email", "email.message", "email.parser", "mailbox", "mimetypes", "html", "html.parser",
        "xml.etree.ElementTree", "xml.dom.minidom", "xml.sax"]),
    "Development": ("Testing and debugging", [
        "unittest", "doctest", "pdb", "bdb", "traceback", "timeit", "cProfile", "pstats",
        "trace", "tracemalloc", "faulthandler", "warnings", "logging"]),
    "Runtime": ("Interpreter and runtime", [
        "sys", "builtins", "gc", "inspect", "abc", "atexit", "site", "sysconfig", "platform",
        "importlib", "pkgutil", "runpy", "zipimport", "typing"]),
    "Language": ("Language services", [
        "ast", "symtable", "token", "tokenize", "keyword", "dis", "tabnanny", "py_compile",
        "compileall", "pyclbr"]),
    "Security": ("Cryptography and security", ["hashlib", "hmac", "secrets", "uuid"]),
    "Command_line": ("Command-line programs", [
        "argparse", "getopt", "optparse", "getpass", "cmd", "curses", "readline"]),
}

# Common English words: a mention of these module names in prose only counts with a "." or
# "module" after it, so "the time of day" does not link to the time module.
AMBIGUOUS = {"time", "string", "types", "copy", "random", "code", "select", "queue", "array",
             "signal", "secrets", "struct", "token", "keyword", "site", "calendar", "locale",
             "email", "html", "io", "os", "sys", "math", "stat", "trace", "numbers", "operator",
             "builtins", "inspect", "enum", "abc", "glob", "cmd", "platform", "json", "csv",
             "shelve", "pickle", "sched", "weakref", "warnings", "logging", "typing",
             "heapq", "bisect", "collections", "functools", "itertools", "uuid", "mailbox",
             "tempfile", "shutil", "subprocess", "threading", "socket", "datetime", "decimal"}

# Lessons (tutorial host): a slug, a title, an intro, and pages of objects quoted in full.
LESSONS: list[tuple[str, str, str, str, list[list[str]]]] = [
    ("regular-expressions", "Regular expressions", "Text_processing",
     "Regular expressions describe patterns in text. This lesson walks through the re module "
     "one regular expression function at a time, then looks at shell-style patterns.", [
         ["re.compile", "re.search", "re.match", "re.fullmatch"],
         ["re.findall", "re.finditer", "re.split"],
         ["re.sub", "re.subn", "re.escape", "re.purge"],
         ["re.Pattern", "re.Pattern.search", "re.Pattern.sub", "re.Match", "re.Match.group",
          "re.Match.groupdict", "re.Match.span"],
         ["fnmatch.translate", "fnmatch.fnmatch", "fnmatch.filter", "glob.glob", "glob.escape"],
         ["re.error", "shlex.split", "string.Template"]]),
    ("unicode-text", "Unicode text and encodings", "Unicode_and_encodings",
     "Text in Python is Unicode; files, sockets and pipes carry bytes. Encoding turns text into "
     "bytes and decoding turns bytes back into text, and a codec does both.", [
         ["str.encode", "bytes.decode", "str.isascii", "str.casefold"],
         ["codecs.encode", "codecs.decode", "codecs.lookup", "codecs.register_error"],
         ["codecs.open", "codecs.getreader", "codecs.getincrementaldecoder",
          "codecs.IncrementalDecoder"],
         ["unicodedata.normalize", "unicodedata.name", "unicodedata.lookup",
          "unicodedata.category", "unicodedata.east_asian_width"],
         ["io.TextIOWrapper", "io.text_encoding", "locale.getpreferredencoding",
          "locale.getencoding"],
         ["os.fsencode", "os.fsdecode", "sys.getfilesystemencoding", "sys.getdefaultencoding"],
         ["base64.b64encode", "base64.b64decode", "binascii.b2a_qp", "quopri.encodestring"]]),
    ("sockets", "Network programming with sockets", "Networking",
     "A socket is one end of a network connection. These pages build up from creating a TCP "
     "connection to servers that handle many clients, then add TLS on top.", [
         ["socket.create_connection", "socket.create_server", "socket.getaddrinfo"],
         ["socket.socket", "socket.socketpair", "socket.fromfd", "socket.SocketType"],
         ["socket.setdefaulttimeout", "socket.getdefaulttimeout", "socket.inet_aton",
          "socket.inet_pton", "socket.htons"],
         ["selectors.DefaultSelector", "selectors.BaseSelector", "select.select", "select.poll"],
         ["socketserver.TCPServer", "socketserver.ThreadingMixIn",
          "socketserver.BaseRequestHandler", "socketserver.BaseServer"],
         ["ssl.create_default_context", "ssl.SSLSocket", "ssl.SSLContext", "ssl.SSLObject"],
         ["http.client.HTTPConnection", "urllib.request.urlopen", "ipaddress.ip_address",
          "ipaddress.ip_network"]]),
    ("dates-and-time-zones", "Dates, times and time zones", "Dates_and_times",
     "A date without a time zone is ambiguous. These pages show aware datetime objects, fixed "
     "UTC offsets, the IANA time zone database and conversion between local time and UTC.", [
         ["datetime.datetime", "datetime.datetime.astimezone", "datetime.datetime.utcoffset",
          "datetime.datetime.now"],
         ["datetime.timezone", "datetime.tzinfo", "datetime.tzinfo.utcoffset",
          "datetime.tzinfo.dst", "datetime.tzinfo.tzname"],
         ["zoneinfo.ZoneInfo", "zoneinfo.available_timezones", "zoneinfo.reset_tzpath"],
         ["time.gmtime", "time.localtime", "time.mktime", "time.tzset"],
         ["time.strftime", "time.strptime", "datetime.datetime.strptime",
          "datetime.datetime.fromtimestamp"],
         ["calendar.timegm", "email.utils.formatdate", "email.utils.localtime",
          "email.utils.format_datetime"]]),
    ("threads", "Threads and concurrency", "Concurrency",
     "Threads let a program wait for several things at once. This lesson covers starting "
     "threads, protecting shared state with locks, passing work through queues, and the "
     "higher-level concurrent.futures executors.", [
         ["threading.Thread", "threading.Thread.start", "threading.Thread.join",
          "threading.current_thread"],
         ["threading.Lock", "threading.RLock", "threading.Condition"],
         ["threading.Semaphore", "threading.Event", "threading.Barrier", "threading.Timer"],
         ["queue.Queue", "queue.Queue.put", "queue.Queue.get", "queue.Queue.task_done"],
         ["concurrent.futures.ThreadPoolExecutor", "concurrent.futures.Executor.submit",
          "concurrent.futures.as_completed", "concurrent.futures.wait"],
         ["multiprocessing.Process", "multiprocessing.pool.Pool", "multiprocessing.Queue"],
         ["asyncio.to_thread", "asyncio.run_coroutine_threadsafe", "asyncio.Lock",
          "threading.local", "contextvars.ContextVar"]]),
    ("files", "Working with files and paths", "Files",
     "Paths, directories and file copies, from the object-oriented pathlib to shutil.", [
         ["pathlib.Path", "pathlib.Path.read_text", "pathlib.Path.glob", "pathlib.PurePath"],
         ["shutil.copy", "shutil.copytree", "shutil.rmtree", "shutil.move"],
         ["os.walk", "os.scandir", "os.path.join", "tempfile.TemporaryDirectory"]]),
    ("data-formats", "Reading and writing data formats", "Data_formats",
     "JSON, CSV and configuration files are the everyday formats of data exchange.", [
         ["json.dumps", "json.loads", "json.JSONEncoder"],
         ["csv.reader", "csv.writer", "csv.DictReader", "csv.Sniffer"],
         ["configparser.ConfigParser", "tomllib.load", "plistlib.loads"]]),
    ("numbers", "Numbers, fractions and statistics", "Numbers",
     "Exact decimal and rational arithmetic, and descriptive statistics.", [
         ["decimal.Decimal", "decimal.getcontext", "fractions.Fraction"],
         ["statistics.mean", "statistics.median", "statistics.stdev",
          "statistics.NormalDist"],
         ["math.isclose", "math.fsum", "random.choice", "random.shuffle"]]),
    ("collections", "Containers beyond list and dict", "Data_types",
     "Counters, deques, default dictionaries, heaps and sorted insertion.", [
         ["collections.Counter", "collections.deque", "collections.defaultdict"],
         ["collections.namedtuple", "collections.OrderedDict", "collections.ChainMap"],
         ["heapq.heappush", "heapq.heappop", "heapq.nlargest", "bisect.insort"]]),
    ("testing", "Testing and debugging", "Development",
     "Unit tests, doctests, and what to do when a test fails.", [
         ["unittest.TestCase", "unittest.TestCase.assertEqual", "unittest.main"],
         ["doctest.testmod", "doctest.DocTestRunner", "pdb.set_trace"],
         ["traceback.print_exc", "traceback.format_exception", "timeit.timeit"]]),
    ("command-line", "Command-line programs", "Command_line",
     "Parsing arguments and options, and reading passwords without echo.", [
         ["argparse.ArgumentParser", "argparse.ArgumentParser.add_argument",
          "argparse.Namespace"],
         ["getopt.getopt", "getpass.getpass", "shlex.quote", "cmd.Cmd"]]),
    ("functional", "Functional tools", "Functional",
     "Iterators, partial application and caching.", [
         ["itertools.chain", "itertools.groupby", "itertools.product", "itertools.islice"],
         ["functools.partial", "functools.lru_cache", "functools.reduce",
          "functools.singledispatch"],
         ["contextlib.contextmanager", "contextlib.suppress", "contextlib.ExitStack"]]),
    ("compression", "Compression and archives", "Compression",
     "Reading and writing gzip, bz2 and xz streams, zip and tar archives.", [
         ["gzip.open", "gzip.compress", "bz2.open", "lzma.open"],
         ["zipfile.ZipFile", "zipfile.is_zipfile", "tarfile.open", "tarfile.TarFile"]]),
]

# Lessons built from language-reference topics (pydoc_data): (slug, title, category, topics).
REFERENCE_LESSONS: list[tuple[str, str, list[str]]] = [
    ("strings", "Strings and formatting", ["strings", "string-methods", "formatstrings"]),
    ("numbers", "Numeric types", ["integers", "floating", "imaginary", "numbers",
                                  "numeric-types", "binary", "bitwise", "shifting", "power"]),
    ("control-flow", "Control flow", ["if", "while", "for", "break", "continue", "pass",
                                      "else", "truth", "booleans", "comparisons"]),
    ("functions", "Functions", ["function", "lambda", "return", "yield", "calls", "global",
                                "nonlocal", "typesfunctions"]),
    ("classes", "Classes and objects", ["class", "objects", "customization", "specialnames",
                                        "specialattrs", "attribute-access", "id-classes"]),
    ("exceptions", "Errors and exceptions", ["exceptions", "try", "raise", "assert"]),
    ("context-managers", "The with statement", ["with", "context-managers"]),
    ("coroutines", "Coroutines and async", ["async", "await"]),
    ("modules", "Modules and the import system", ["import", "typesmodules", "naming",
                                                  "execmodel", "dynamic-features"]),
    ("containers", "Lists, dictionaries and sequences", ["lists", "dict", "typesmapping",
                                                         "sequence-types", "typesseq",
                                                         "typesseq-mutable", "slicings",
                                                         "subscriptions"]),
]

# Wiki class articles: the class docstring and its methods.
WIKI_ARTICLES = [
    "re.Pattern", "re.Match", "string.Formatter", "difflib.SequenceMatcher",
    "codecs.Codec", "codecs.StreamReader", "codecs.StreamWriter", "io.StringIO",
    "socket.socket", "ssl.SSLContext", "selectors.SelectSelector", "socketserver.UDPServer",
    "http.server.BaseHTTPRequestHandler", "urllib.request.Request", "ipaddress.IPv4Network",
    "datetime.datetime", "datetime.timezone", "datetime.tzinfo", "datetime.date",
    "datetime.timedelta", "zoneinfo.ZoneInfo", "calendar.Calendar", "sched.scheduler",
    "threading.Thread", "threading.Condition", "threading.Event", "queue.PriorityQueue",
    "concurrent.futures.Future", "multiprocessing.pool.ThreadPool", "asyncio.Queue",
    "collections.Counter", "collections.deque", "fractions.Fraction", "decimal.Context",
    "random.Random", "pathlib.Path", "zipfile.ZipFile", "tarfile.TarInfo", "csv.DictWriter",
    "json.JSONDecoder", "configparser.ConfigParser", "sqlite3.Connection",
    "logging.Logger", "logging.Handler", "unittest.TestCase", "unittest.mock.Mock",
    "argparse.ArgumentParser", "email.message.EmailMessage", "xml.etree.ElementTree.Element",
    "html.parser.HTMLParser", "tempfile.SpooledTemporaryFile", "enum.Enum",
    "textwrap.TextWrapper", "pprint.PrettyPrinter", "inspect.Signature", "ast.NodeVisitor",
    "smtplib.SMTP", "ftplib.FTP", "mailbox.Maildir", "weakref.WeakValueDictionary",
]

# Blog posts: one function or class each, with its tags (wiki category slugs).
BLOG_POSTS = [
    "re.Match.expand", "re.Pattern.finditer", "re.Match.groups", "fnmatch.fnmatchcase",
    "re.Pattern.fullmatch", "difflib.get_close_matches", "textwrap.dedent", "string.capwords",
    "codecs.iterencode", "codecs.BOM_UTF8", "unicodedata.decomposition", "str.translate",
    "bytes.hex", "io.open", "locale.setlocale", "html.escape", "html.unescape",
    "urllib.parse.quote", "urllib.parse.unquote",
    "socket.gethostname", "socket.getfqdn", "socket.socket.settimeout", "socket.socket.sendall",
    "socket.socket.recv", "socket.has_dualstack_ipv6", "ssl.get_server_certificate",
    "select.epoll",
    "socketserver.ForkingMixIn", "http.client.HTTPResponse", "urllib.parse.urlsplit",
    "datetime.datetime.utcnow", "datetime.datetime.isoformat", "datetime.datetime.replace",
    "datetime.date.fromisoformat", "time.time", "time.monotonic", "time.perf_counter",
    "calendar.monthrange", "email.utils.parsedate_tz", "zoneinfo.ZoneInfo.no_cache",
    "threading.active_count", "threading.enumerate", "threading.main_thread",
    "_thread.LockType.acquire", "threading.get_ident", "queue.LifoQueue", "queue.SimpleQueue",
    "concurrent.futures.ProcessPoolExecutor", "concurrent.futures.Future.result",
    "sys.setswitchinterval", "_thread.start_new_thread", "asyncio.gather",
    "itertools.accumulate", "itertools.pairwise", "functools.cache", "functools.wraps",
    "operator.itemgetter", "collections.Counter.most_common", "heapq.merge",
    "bisect.bisect_left", "math.comb", "math.gcd", "statistics.quantiles", "random.sample",
    "fractions.Fraction.limit_denominator", "decimal.Decimal.quantize",
    "pathlib.Path.iterdir", "os.makedirs", "shutil.which", "glob.iglob", "tempfile.mkdtemp",
    "json.dump", "csv.field_size_limit", "pickle.dumps", "shelve.open", "sqlite3.connect",
    "struct.pack", "struct.unpack", "zlib.compress", "gzip.decompress",
    "zipfile.ZipFile.extractall",
    "hashlib.sha256", "hmac.compare_digest", "secrets.token_hex", "uuid.uuid4",
    "logging.basicConfig", "logging.getLogger", "warnings.warn", "unittest.skipIf",
    "timeit.repeat", "pprint.pformat", "dataclasses.dataclass", "dataclasses.field",
    "enum.auto", "typing.NamedTuple", "typing.TypedDict", "abc.abstractmethod",
    "contextlib.closing", "atexit.register", "inspect.getsource", "dis.dis",
    "ast.literal_eval", "keyword.iskeyword", "argparse.FileType", "getpass.getuser",
]

# The script and style junk on blog and news pages: words a text extractor must drop.
JUNK_STYLE = """<style>
body{font-family:Georgia,serif;max-width:46em;margin:auto}nav a{margin-right:.6em}
.sidebar{float:right;width:14em}.tag{background:#eef;padding:0 .3em}
</style>"""
JUNK_SCRIPT = """<script>
/* reader analytics: counts which topics readers click (unicode socket thread timezone regex) */
var trackedTopics = ["unicode encoding utf-8", "socket network", "thread lock concurrency",
  "time zone utc tzinfo", "regular expression regex"];
function track(ev){ var t = ev.target.textContent; window.__clicks = (window.__clicks||0)+1; }
document.addEventListener("click", track);
</script>"""
JUNK_TICKER = """<script type="text/javascript">
// headline ticker: rotates keywords (threading socket unicode codec utc regex)
var ticker = ["threading", "socket", "unicode", "codec", "utc", "regex"], i = 0;
setInterval(function(){ i = (i + 1) % ticker.length; }, 4000);
</script>"""


# ---------------------------------------------------------------------------- helpers
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def clean(text: str) -> str:
    return _ADDR.sub("", text).replace("\r\n", "\n")


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def resolve(qualname: str) -> Any:
    """The object named by a dotted path: the longest importable module, then attributes."""
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        try:
            obj: Any = importlib.import_module(modname)
        except ImportError:
            continue
        if modname == "builtins" and i == len(parts):
            return obj
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    import builtins
    obj = builtins
    for attr in parts:
        obj = getattr(obj, attr)
    return obj


def module_of(qualname: str) -> str:
    """The documented module a qualified name lives in (its docs page)."""
    parts = qualname.split(".")
    for i in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:i])
        if name in ALL_MODULES:
            return name
    return "builtins"


def getdoc(obj: Any) -> str:
    return clean(inspect.getdoc(obj) or "")


def signature(obj: Any) -> str:
    if not callable(obj):
        return ""
    try:
        text = clean(str(inspect.signature(obj)))
    except (TypeError, ValueError):
        return "(...)" if not inspect.isclass(obj) else ""
    # defaults taken from the generating machine (platform.architecture's sys.executable) would
    # make the committed site depend on where it was built
    return text.replace(repr(sys.executable), "'python'")


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def first_para(text: str, limit: int = 600) -> str:
    ps = paragraphs(text)
    p = " ".join(ps[0].split()) if ps else ""
    return p if len(p) <= limit else p[: limit - 1].rsplit(" ", 1)[0] + "…"


def text_html(text: str, limit: int = 0, level: int = 3) -> str:
    """Plain docstring/reST-ish text -> <p>, <pre> (indented or >>> lines) and headings."""
    if limit and len(text) > limit:
        text = text[:limit].rsplit("\n\n", 1)[0]
    out = []
    for para in paragraphs(text):
        lines = para.split("\n")
        if len(lines) >= 2 and re.fullmatch(r"[=*\-~^]{3,}", lines[1].strip()):
            out.append(f"<h{level}>{esc(lines[0].strip())}</h{level}>")
            lines = lines[2:]
        # runs of prose lines become one <p>, runs of indented/prompt lines one <pre>
        run: list[str] = []
        code = False
        for ln in [*lines, None]:
            is_code = ln is not None and (ln.startswith((" ", "\t", ">>>", "...")))
            if ln is None or (run and is_code != code):
                if run and code:
                    out.append(f"<pre>{esc(textwrap.dedent(chr(10).join(run)))}</pre>")
                elif run:
                    out.append(f"<p>{esc(' '.join(' '.join(run).split()))}</p>")
                run = []
            if ln is not None:
                run.append(ln)
                code = is_code
    return "\n".join(out)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


ALL_MODULES: list[str] = [m for _, (_, ms) in CATEGORIES.items() for m in ms]
MODULE_CATEGORY: dict[str, str] = {m: c for c, (_, ms) in CATEGORIES.items() for m in ms}


def docs_url(module: str, anchor: str = "") -> str:
    return f"http://{DOCS}/library/{module}.html" + (f"#{anchor}" if anchor else "")


def wiki_article_path(qualname: str) -> str:
    return f"/wiki/{qualname}.html"


def lesson_path(lesson_slug: str, n: int) -> str:
    return f"/lessons/{lesson_slug}/{n}.html"


def mentioned_modules(text: str, exclude: str) -> list[str]:
    """Documented modules named in ``text``, in order of first mention."""
    found: list[tuple[int, str]] = []
    for m in ALL_MODULES:
        if m == exclude or m.startswith("_"):
            continue
        q = re.escape(m)
        pat = (rf"(?<![\w.]){q}(?:\.[A-Za-z_]|\s+module)" if m in AMBIGUOUS
               else rf"(?<![\w.]){q}(?![\w])")
        hit = re.search(pat, text)
        if hit:
            found.append((hit.start(), m))
    return [m for _, m in sorted(found)]


def public_members(mod: Any) -> list[tuple[str, Any]]:
    """Documented public classes and functions of a module, __all__ order when it has one."""
    names = getattr(mod, "__all__", None)
    if not isinstance(names, (list, tuple)):
        names = sorted(n for n in dir(mod) if not n.startswith("_"))
    base = mod.__name__.split(".")[-1]
    out = []
    for n in names:
        obj = getattr(mod, n, None)
        if not (inspect.isclass(obj) or inspect.isroutine(obj)):
            continue
        owner = getattr(obj, "__module__", None) or ""
        if owner not in (mod.__name__, "_" + base) and not owner.startswith(mod.__name__ + ".") \
                and not owner.startswith("_" + base) and mod.__name__ != "builtins":
            continue
        if not getdoc(obj):
            continue
        out.append((n, obj))
    return out


def methods_of(cls: type) -> list[tuple[str, Any]]:
    out = []
    for n, obj in sorted(vars(cls).items()):
        if n.startswith("_") and n not in ("__init__", "__enter__", "__exit__"):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if not (inspect.isroutine(obj) or isinstance(obj, property)):
            continue
        d = getdoc(obj)
        if d and not d.startswith(("Return getattr", "Implement ", "Initialize self")):
            out.append((n, obj))
    return out


# ----------------------------------------------------------------------------- the site
@dataclass
class Site:
    pages: dict[tuple[str, str], str] = field(default_factory=dict)
    redirects: dict[str, dict[str, Any]] = field(default_factory=dict)
    robots: dict[str, str] = field(default_factory=dict)
    extra: dict[tuple[str, str], str] = field(default_factory=dict)  # non-HTML files

    def add(self, host: str, path: str, title: str, body: str, *, junk: bool = False,
            ticker: bool = False, description: str = "") -> None:
        if (host, path) in self.pages:
            raise ValueError(f"duplicate page {host}{path}")
        self.pages[(host, path)] = layout(host, title, body, junk=junk, ticker=ticker,
                                          description=description)


def nav(host: str) -> str:
    sections = {
        DOCS: [("/index.html", "Home"), ("/library/index.html", "Module index"),
               ("/about.html", "About")],
        TUT: [("/index.html", "Lessons"), ("/reference/index.html", "Language reference"),
              ("/about.html", "About")],
        WIKI: [("/index.html", "Main page"), ("/wiki/All_articles.html", "All articles"),
               ("/wiki/Main_Page.html", "Portal")],
        BLOG: [("/index.html", "Recent posts"), ("/latest.html", "Latest"),
               ("/tags/index.html", "Tags"), ("/about.html", "About")],
        NEWS: [("/index.html", "News"), ("/releases/index.html", "IDLE releases"),
               ("/weekly/index.html", "Weekly"), ("/docs.html", "Docs")],
        COOK: [("/index.html", "Recipes"), ("/chapters.html", "Chapters"),
               ("/about.html", "About")],
        LINKS: [("/index.html", "New links"), ("/popular.html", "Popular"),
                ("/about.html", "About")],
    }[host]
    local = " ".join(f'<a href="{p}">{esc(t)}</a>' for p, t in sections)
    other = " ".join(f'<a href="http://{h}/index.html">{esc(SITE_NAMES[h])}</a>'
                     for h in SITE_NAMES if h != host)
    return (f'<header><nav class="site">{local}</nav>'
            f'<nav class="network">Elsewhere: {other}</nav></header>')


def footer(host: str) -> str:
    return ("<footer><p>Generated from the documentation that ships with Python: module "
            "docstrings, the language reference topics and IDLE's release notes. "
            f'<a href="/about.html">About {esc(SITE_NAMES[host])}</a> · '
            f'<a href="http://{NEWS}/index.html">News</a> · '
            f'<a href="http://{WIKI}/index.html">Wiki</a></p></footer>')


def layout(host: str, title: str, body: str, *, junk: bool, ticker: bool,
           description: str) -> str:
    head_extra = JUNK_STYLE + "\n" if junk or ticker else ""
    tail = (JUNK_SCRIPT if junk else "") + (JUNK_TICKER if ticker else "")
    desc = f'<meta name="description" content="{esc(description)}">\n' if description else ""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{esc(title)} — {esc(SITE_NAMES[host])}</title>\n{desc}"
            f'<link rel="stylesheet" href="/static/site.css">\n{head_extra}</head>\n<body>\n'
            f"{nav(host)}\n<main>\n{body}\n</main>\n{footer(host)}\n{tail}</body>\n</html>\n")


def links_list(items: Iterable[tuple[str, str, str]]) -> str:
    """<ul> of (href, text, note)."""
    lis = [f'<li><a href="{esc(h)}">{esc(t)}</a>' + (f" — {esc(n)}" if n else "") + "</li>"
           for h, t, n in items]
    return "<ul>\n" + "\n".join(lis) + "\n</ul>" if lis else ""


# ------------------------------------------------------------------------ the off-topic web
# The cookbook's material: documented objects of these modules, none mentioning a demo topic.
COOKBOOK_MODULES = ["turtle", "tkinter", "tkinter.ttk"]
COOKBOOK_MAX = 300
LINKS_PER_PAGE = 15


def _stable(key: str) -> int:
    """A hash that is the same in every process (str hash() is salted)."""
    return zlib.crc32(key.encode("utf-8"))


class OffTopic:
    """The hosts a topic's pages link out to: a big off-topic site and a link aggregator."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.recipes: list[tuple[str, str, Any]] = []  # (qualname, chapter, object)
        self.chapters: dict[str, list[str]] = {}
        self.aggregator_pages: list[str] = []

    def plan_recipes(self) -> None:
        topic = re.compile("|".join(f"(?:{t['pattern']})" for t in TOPICS), re.I)
        seen: set[str] = set()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for m in COOKBOOK_MODULES:
                try:
                    mod = importlib.import_module(m)
                except ImportError:  # a Python built without Tk: the cookbook is smaller
                    continue
                for name, obj in public_members(mod):
                    chapter = f"{m}.{name}" if inspect.isclass(obj) else m
                    items = [(f"{m}.{name}", obj)]
                    if inspect.isclass(obj):
                        items += [(f"{m}.{name}.{a}", o) for a, o in methods_of(obj)]
                    for q, o in items:
                        doc = getdoc(o)
                        if len(doc) < 60 or topic.search(doc) or q in seen:
                            continue
                        seen.add(q)
                        self.recipes.append((q, chapter, o))
        self.recipes = self.recipes[:COOKBOOK_MAX]
        for q, chapter, _ in self.recipes:
            self.chapters.setdefault(chapter, []).append(q)
        n_links = -(-(len(self.recipes) + 250) // LINKS_PER_PAGE)  # what build_links will make
        self.aggregator_pages = ["/index.html"] + [f"/new/{k}.html" for k in range(2, n_links)]

    @staticmethod
    def recipe_path(q: str) -> str:
        return f"/recipes/{q}.html"

    @staticmethod
    def chapter_path(chapter: str) -> str:
        return f"/chapters/{chapter}.html"

    def around(self, key: str) -> str:
        """The "Around the web" box of an on-topic page: two recipes and an aggregator page."""
        if not self.recipes:
            return ""
        h = _stable(key)
        picks = [self.recipes[h % len(self.recipes)][0],
                 self.recipes[(h // 7919) % len(self.recipes)][0]]
        rows = [(f"http://{COOK}{self.recipe_path(q)}", f"Recipe: {q}", "")
                for q in dict.fromkeys(picks)]
        page = self.aggregator_pages[(h // 104729) % len(self.aggregator_pages)]
        rows.append((f"http://{LINKS}{page}", "Today's links on Python Links", ""))
        return '<aside class="around"><h2>Around the web</h2>\n' + links_list(rows) + "</aside>"

    def build_cookbook(self) -> None:
        by_q = {q: (chapter, obj) for q, chapter, obj in self.recipes}
        order = [q for q, _, _ in self.recipes]
        for q in order:
            chapter, obj = by_q[q]
            siblings = self.chapters[chapter]
            k = siblings.index(q)
            more = [siblings[(k + d) % len(siblings)] for d in (1, 2, 3) if len(siblings) > d]
            h = _stable(q)
            popular = [order[(h // p) % len(order)] for p in (1, 31, 997, 7919)]
            parts = [f"<h1>Recipe: <code>{esc(q)}{esc(signature(obj))}</code></h1>",
                     text_html(getdoc(obj), 1500),
                     f'<p>From the chapter <a href="{self.chapter_path(chapter)}">'
                     f"{esc(chapter)}</a>.</p>",
                     "<h2>More in this chapter</h2>",
                     links_list((self.recipe_path(x), x, "") for x in dict.fromkeys(more)),
                     "<h2>Popular recipes</h2>",
                     links_list((self.recipe_path(x), x, "") for x in dict.fromkeys(popular)
                                if x != q),
                     f'<p><a href="http://{LINKS}/index.html">Share it on Python Links</a></p>']
            self.site.add(COOK, self.recipe_path(q), f"Recipe: {q}", "\n".join(parts),
                          description=first_para(getdoc(obj), 160))
        rows = []
        for chapter, qs in self.chapters.items():
            self.site.add(COOK, self.chapter_path(chapter), f"Chapter: {chapter}",
                          f"<h1>Recipes for <code>{esc(chapter)}</code></h1>\n" + links_list(
                              (self.recipe_path(q), q, first_para(getdoc(by_q[q][1]), 100))
                              for q in qs))
            rows.append((self.chapter_path(chapter), chapter, f"{len(qs)} recipes"))
        self.site.add(COOK, "/chapters.html", "All chapters",
                      "<h1>All chapters</h1>\n" + links_list(rows))
        featured = [order[(i * 37) % len(order)] for i in range(12)]
        self.site.add(COOK, "/index.html", "Tk & Turtle Cookbook",
                      "<h1>Tk &amp; Turtle Cookbook</h1>\n<p>Recipes for drawing with the "
                      "turtle and building windows with Tk, one object at a time.</p>\n"
                      "<h2>Featured recipes</h2>\n" + links_list(
                          (self.recipe_path(q), q, "") for q in dict.fromkeys(featured))
                      + "<h2>Chapters</h2>\n" + links_list(rows[:20])
                      + '<p><a href="/chapters.html">All chapters</a></p>')
        self.site.add(COOK, "/about.html", "About the cookbook",
                      "<h1>About</h1>\n<p>Recipes quoting the documentation of the tkinter "
                      "and turtle modules.</p>")

    def build_links(self, elsewhere: list[tuple[str, str]]) -> None:
        """Pages of links, newest first: every recipe and ``elsewhere`` (url, title), shuffled."""
        items = [(f"http://{COOK}{self.recipe_path(q)}", f"Recipe: {q}")
                 for q, _, _ in self.recipes]
        items += elsewhere[: max(0, len(self.aggregator_pages) * LINKS_PER_PAGE - len(items))]
        random.Random(38).shuffle(items)  # a fixed seed: the same site on every run
        pages = self.aggregator_pages
        chunks = [items[i * LINKS_PER_PAGE:(i + 1) * LINKS_PER_PAGE] for i in range(len(pages))]
        for k, (path, chunk) in enumerate(zip(pages, chunks, strict=True)):
            pager = [f'<a href="{pages[k + 1]}">Older links</a>'] if k + 1 < len(pages) else []
            if k:
                pager.append(f'<a href="{pages[k - 1]}">Newer links</a>')
            self.site.add(LINKS, path, "Python Links" + (f" — page {k + 1}" if k else ""),
                          f"<h1>New links, page {k + 1}</h1>\n"
                          + links_list((u, t, urlsplit(u).hostname or "") for u, t in chunk)
                          + '<p class="pager">' + " · ".join(pager) + "</p>")
        popular = [items[(i * 53) % len(items)] for i in range(40)]
        self.site.add(LINKS, "/popular.html", "Popular on Python Links",
                      "<h1>Popular this week</h1>\n" + links_list(
                          (u, t, urlsplit(u).hostname or "") for u, t in dict.fromkeys(popular)))
        self.site.add(LINKS, "/about.html", "About Python Links",
                      "<h1>About</h1>\n<p>Links to anything Python, posted by readers.</p>")


# ----------------------------------------------------------------------------- builders
class Builder:
    def __init__(self) -> None:
        self.site = Site()
        self.modules: dict[str, Any] = {}
        self.lessons_by_module: dict[str, list[tuple[str, str]]] = {}
        self.lessons_by_cat: dict[str, list[tuple[str, str, str]]] = {}
        self.posts: list[dict[str, Any]] = []
        self.articles: dict[str, str] = {}  # qualname -> summary
        self.offtopic = OffTopic(self.site)

    def load_modules(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for m in ALL_MODULES:
                try:
                    self.modules[m] = importlib.import_module(m)
                except ImportError:
                    pass

    # -- tutorial
    def build_lessons(self) -> None:
        for lesson_slug, title, cat, intro, pages in LESSONS:
            for n, names in enumerate(pages, 1):
                objs = []
                for q in names:
                    try:
                        objs.append((q, resolve(q)))
                    except (AttributeError, ImportError):
                        continue
                for q, _ in objs:
                    self.lessons_by_module.setdefault(module_of(q), []).append(
                        (lesson_path(lesson_slug, n), f"{title}, part {n}"))
                self.lessons_by_cat.setdefault(cat, []).append(
                    (lesson_path(lesson_slug, n), f"{title}, part {n}: "
                     + ", ".join(q for q, _ in objs[:3]), ""))
                self._lesson_page(lesson_slug, title, cat, intro, n, len(pages), objs)
        rows = [(lesson_path(s, 1), t, intro) for s, t, _, intro, _ in LESSONS]
        rows += [(f"/reference/lesson-{s}.html", t, "from the language reference")
                 for s, t, _ in REFERENCE_LESSONS]
        body = ("<h1>Python lessons</h1>\n<p>Short lessons on the standard library, each page "
                "quoting the reference documentation of a few functions, and a tour of the "
                "language reference.</p>\n" + links_list(rows))
        self.site.add(TUT, "/index.html", "Python lessons", body)
        self.site.add(TUT, "/about.html", "About the tutorial", "<h1>About</h1>" + text_html(
            clean(sys.copyright)) + "<p>The lessons quote the docstrings of the modules.</p>")

    def _lesson_page(self, lesson_slug: str, title: str, cat: str, intro: str, n: int,
                     total: int, objs: list[tuple[str, Any]]) -> None:
        parts = [f"<h1>{esc(title)}, part {n} of {total}</h1>"]
        if n == 1:
            parts.append(f"<p>{esc(intro)}</p>")
        parts.append("<p>This page covers " + ", ".join(
            f"<code>{esc(q)}</code>" for q, _ in objs) + ".</p>")
        for q, obj in objs:
            mod = module_of(q)
            # an alias declared in docs' _redirects.json, used as a real site would
            href = {"re.compile": f"http://{DOCS}/library/regex.html",
                    "zoneinfo.ZoneInfo": f"http://{DOCS}/library/tz.html"}.get(q, docs_url(mod, q))
            parts.append(f'<section id="{esc(q)}"><h2><code>{esc(q)}{esc(signature(obj))}'
                         f"</code></h2>\n{text_html(getdoc(obj), 4000)}\n"
                         f'<p class="ref">Reference: <a href="{esc(href)}">{esc(q)} in the '
                         f"{esc(mod)} module documentation</a></p></section>")
        navl = []
        if n > 1:
            navl.append(f'<a href="{n - 1}.html">Previous: part {n - 1}</a>')
        if n < total:
            navl.append(f'<a href="{n + 1}.html">Next: part {n + 1}</a>')
        navl.append('<a href="/index.html">All lessons</a>')
        parts.append('<p class="pager">' + " · ".join(navl) + "</p>")
        parts.append(f'<p>Discuss this topic on the wiki: <a href="http://{WIKI}/wiki/{cat}.html">'
                     f"{esc(CATEGORIES[cat][0])}</a>.</p>")
        parts.append(self.offtopic.around(lesson_path(lesson_slug, n)))
        self.site.add(TUT, lesson_path(lesson_slug, n), f"{title}, part {n}", "\n".join(parts),
                      description=intro)

    def build_reference(self) -> None:
        from pydoc_data.topics import topics

        titles = {}
        for key in sorted(topics):
            text = clean(topics[key])
            first = text.strip().split("\n", 1)[0].strip()
            titles[key] = first or key
            body = (f"<h1>{esc(titles[key])}</h1>\n" + text_html(text.split("\n", 2)[-1], 0, 2)
                    + '\n<p><a href="index.html">Language reference index</a></p>')
            self.site.add(TUT, f"/reference/{key}.html", titles[key], body)
        rows = [(f"{k}.html", titles[k], "") for k in sorted(topics)]
        self.site.add(TUT, "/reference/index.html", "Language reference",
                      "<h1>The Python language reference</h1>\n<p>The reference topics that "
                      "the interactive help() shows.</p>\n" + links_list(rows))
        for s, title, keys in REFERENCE_LESSONS:
            rows = [(f"{k}.html", titles[k], first_para(topics[k].split("\n", 2)[-1], 220))
                    for k in keys if k in topics]
            self.site.add(TUT, f"/reference/lesson-{s}.html", title,
                          f"<h1>{esc(title)}</h1>\n<p>A reading list through the language "
                          f"reference.</p>\n" + links_list(rows))

    # -- docs
    def build_docs(self) -> None:
        for m, mod in self.modules.items():
            self._module_page(m, mod)
        cats = []
        for c, (title, ms) in CATEGORIES.items():
            rows = [(f"{m}.html", m, self.synopsis(m)) for m in ms if m in self.modules]
            cats.append(f'<h2 id="{c}">{esc(title)}</h2>\n' + links_list(rows))
        self.site.add(DOCS, "/library/index.html", "The Python standard library",
                      "<h1>The Python standard library</h1>\n<p>Modules by category.</p>\n"
                      + "\n".join(cats))
        body = ("<h1>Python library documentation</h1>\n"
                + text_html(getdoc(self.modules["builtins"]))
                + '\n<p>Start with the <a href="/library/index.html">module index</a>, or the '
                f'<a href="/modindex.html">alphabetical list</a>. New to Python? Try the '
                f'<a href="http://{TUT}/index.html">lessons</a>.</p>\n<h2>Popular modules</h2>\n'
                + links_list((f"/library/{m}.html", m, self.synopsis(m)) for m in
                             ["re", "datetime", "socket", "threading", "codecs", "json",
                              "pathlib", "collections"]))
        self.site.add(DOCS, "/index.html", "Python library documentation", body)
        rows = [(f"/library/{m}.html", m, self.synopsis(m)) for m in sorted(self.modules)]
        self.site.add(DOCS, "/genindex.html", "Alphabetical module list",
                      "<h1>All modules A–Z</h1>\n" + links_list(rows))
        self.site.add(DOCS, "/about.html", "About these documents",
                      "<h1>About these documents</h1>\n" + text_html(clean(sys.copyright))
                      + "<p>The pages are generated from the docstrings of the modules.</p>")
        self.site.redirects[DOCS] = {
            "/modindex.html": "/genindex.html",
            "/library/regex.html": "/library/re.html",
            "/library/tz.html": {"location": "/library/zoneinfo.html", "status": 302},
        }

    def titles(self, host: str) -> list[tuple[tuple[str, str], str]]:
        """((host, path), title) of a host's pages so far, from their <title>."""
        out = []
        for (h, path), page in self.site.pages.items():
            if h == host:
                title = re.search(r"<title>(.*?) — ", page)
                out.append(((h, path), html.unescape(title.group(1)) if title else path))
        return out

    def synopsis(self, m: str) -> str:
        d = getdoc(self.modules[m]) if m in self.modules else ""
        return first_para(d, 140) if d else ""

    def _module_page(self, m: str, mod: Any) -> None:
        doc = getdoc(mod)
        syn = self.synopsis(m) or f"the {m} module"
        ps = paragraphs(doc)
        if ps and " ".join(ps[0].split()) == syn:  # the synopsis is already the title
            doc_body = doc.strip()[len(ps[0]):]
        else:
            doc_body = doc
        parts = [f"<h1><code>{esc(m)}</code> — {esc(syn)}</h1>", text_html(doc_body, 9000, 2)]
        members = public_members(mod)[:40]
        if members:
            parts.append("<h2>Contents</h2>")
            for n, obj in members:
                q = f"{m}.{n}"
                kind = "class" if inspect.isclass(obj) else "function"
                parts.append(f'<section id="{esc(q)}"><h3>{kind} <code>{esc(q)}'
                             f"{esc(signature(obj))}</code></h3>\n"
                             f"<p>{esc(first_para(getdoc(obj), 500))}</p>")
                if q in WIKI_ARTICLES:
                    parts.append(f'<p>More on the wiki: <a href="http://{WIKI}'
                                 f'{wiki_article_path(q)}">{esc(q)}</a></p>')
                parts.append("</section>")
        texts = doc + " " + " ".join(getdoc(o) for _, o in members)
        related = mentioned_modules(texts, m)
        pkg = m.rsplit(".", 1)[0] if "." in m else m
        family = [x for x in ALL_MODULES if x != m and x in self.modules and
                  (x.startswith(pkg + ".") or x == pkg)]
        see = [x for x in dict.fromkeys(family + related) if x in self.modules][:14]
        if see:
            parts.append("<h2>See also</h2>\n" + links_list(
                (f"{x}.html", x, self.synopsis(x)) for x in see))
        lessons = list(dict.fromkeys(self.lessons_by_module.get(m, [])))
        if lessons:
            parts.append("<h2>Tutorials</h2>\n" + links_list(
                (f"http://{TUT}{p}", t, "") for p, t in lessons))
        cat = MODULE_CATEGORY[m]
        sib = [(f"{x}.html", x, "") for x in CATEGORIES[cat][1] if x in self.modules and x != m]
        parts.append(f'<aside class="sidebar"><h2>{esc(CATEGORIES[cat][0])}</h2>\n'
                     + links_list(sib) + f'<p><a href="index.html#{cat}">Category index</a> · '
                     f'<a href="http://{WIKI}/wiki/{cat}.html">Wiki portal</a></p></aside>')
        parts.append(self.offtopic.around(f"/library/{m}.html"))
        self.site.add(DOCS, f"/library/{m}.html", f"{m} — {syn}", "\n".join(parts),
                      description=syn)

    # -- wiki
    def build_wiki(self) -> None:
        for q in WIKI_ARTICLES:
            try:
                cls = resolve(q)
            except (AttributeError, ImportError):
                continue
            self._article(q, cls)
        for c, (title, ms) in CATEGORIES.items():
            self._hub(c, title, ms)
        rows = [(f"/wiki/{c}.html", t, "") for c, (t, _) in CATEGORIES.items()]
        zen = clean(__import__("codecs").decode(
            "Ornhgvshy vf orggre guna htyl.\nRkcyvpvg vf orggre guna vzcyvpvg.\n"
            "Fvzcyr vf orggre guna pbzcyrk.\nErnqnovyvgl pbhagf.", "rot13"))
        self.site.add(WIKI, "/index.html", "Main page",
                      "<h1>Welcome to the community wiki</h1>\n<p>Portals gather what the "
                      "lessons, the library documentation and the blog say about one subject."
                      "</p>\n<pre>" + esc(zen) + "</pre>\n<h2>Portals</h2>\n" + links_list(rows)
                      + '<p><a href="/wiki/All_articles.html">All articles</a></p>')
        rows = [(wiki_article_path(q), q, s) for q, s in sorted(self.articles.items())]
        self.site.add(WIKI, "/wiki/All_articles.html", "All articles",
                      "<h1>All articles</h1>\n" + links_list(rows))
        self.site.redirects[WIKI] = {"/wiki/Main_Page.html": "/index.html"}
        self.site.robots[WIKI] = "User-agent: *\nDisallow: /edit/\n"

    def _article(self, q: str, cls: Any) -> None:
        doc = getdoc(cls)
        self.articles[q] = first_para(doc, 140)
        m = module_of(q)
        parts = [f"<h1>{esc(q)}</h1>", f"<p><em>class in the <a href="
                 f'"{docs_url(m, q)}">{esc(m)}</a> module</em></p>', text_html(doc, 6000)]
        meths = methods_of(cls)[:30] if inspect.isclass(cls) else []
        if meths:
            parts.append("<h2>Methods and properties</h2>")
            for n, obj in meths:
                parts.append(f"<h3><code>{esc(n)}{esc(signature(obj))}</code></h3>\n"
                             + text_html(getdoc(obj), 900))
        cat = MODULE_CATEGORY.get(m, "Runtime")
        parts.append(f'<p>Portal: <a href="/wiki/{cat}.html">{esc(CATEGORIES[cat][0])}</a> · '
                     f'<a href="/edit{wiki_article_path(q)}">Edit this page</a></p>')
        parts.append(self.offtopic.around(wiki_article_path(q)))
        body = "\n".join(parts)
        self.site.add(WIKI, wiki_article_path(q), q, body, description=self.articles[q])
        self.site.add(WIKI, f"/edit{wiki_article_path(q)}", f"Editing {q}",
                      f"<h1>Editing {esc(q)}</h1>\n<form><textarea rows=\"30\" cols=\"90\">"
                      f"{esc(doc[:3000])}</textarea></form>\n"
                      f'<p><a href="{wiki_article_path(q)}">Cancel</a></p>')

    def _hub(self, c: str, title: str, ms: list[str]) -> None:
        mods = [m for m in ms if m in self.modules]
        intro = " ".join(first_para(getdoc(self.modules[m]), 300) for m in mods[:4])
        parts = [f"<h1>Portal: {esc(title)}</h1>", f"<p>{esc(intro)}</p>",
                 "<h2>Library modules</h2>",
                 links_list((docs_url(m), m, self.synopsis(m)) for m in mods)]
        lessons = self.lessons_by_cat.get(c, [])
        if lessons:
            parts += ["<h2>Lessons</h2>", links_list((f"http://{TUT}{p}", t, n)
                                                     for p, t, n in lessons)]
        arts = [(wiki_article_path(q), q, s) for q, s in self.articles.items()
                if MODULE_CATEGORY.get(module_of(q)) == c]
        if arts:
            parts += ["<h2>Articles</h2>", links_list(arts)]
        posts = [p for p in self.posts if c in p["tags"]]
        if posts:
            parts += ["<h2>From the blog</h2>", links_list(
                (f"http://{BLOG}{p['path']}", p["title"], "") for p in posts)]
        parts.append(f'<p><a href="/edit/wiki/{c}.html">Edit this portal</a></p>')
        self.site.add(WIKI, f"/wiki/{c}.html", f"Portal: {title}", "\n".join(parts),
                      description=intro[:200])
        self.site.add(WIKI, f"/edit/wiki/{c}.html", f"Editing Portal: {title}",
                      f"<h1>Editing Portal: {esc(title)}</h1>\n<form><textarea>{esc(intro)}"
                      f'</textarea></form><p><a href="/wiki/{c}.html">Cancel</a></p>')

    def build(self) -> Site:
        self.load_modules()
        self.offtopic.plan_recipes()  # the on-topic pages link to recipes: plan them first
        self.build_lessons()
        self.build_reference()
        plan_posts(self)
        self.build_wiki()   # hubs list blog posts: after plan_posts
        self.build_docs()   # module pages link lessons and wiki articles: after both
        build_blog(self)
        build_news(self)
        self.offtopic.build_cookbook()
        self.offtopic.build_links(
            [(f"http://{BLOG}{p['path']}", p["title"]) for p in self.posts]
            + [(f"http://{NEWS}{path}", title) for (host, path), title in self.titles(NEWS)]
            + [(docs_url(m), f"The {m} module") for m in self.modules])
        for host in SITE_NAMES:
            self.site.extra[(host, "/static/site.css")] = (
                "body{font-family:sans-serif;max-width:50em;margin:auto}\n"
                "pre{background:#f4f4f4;padding:.5em}\n")
        wiki_about = ("<h1>About the wiki</h1>\n<p>Anyone may edit; edit pages are not for "
                      "robots.</p>")
        self.site.add(WIKI, "/about.html", "About the wiki", wiki_about)
        return self.site


# ------------------------------------------------------------------------------- output
# The blog and the news site: functions of the builder, to keep Builder within ~400 lines.
# -- blog
def plan_posts(b: Builder) -> None:
    for i, q in enumerate(BLOG_POSTS):
        try:
            obj = resolve(q)
        except (AttributeError, ImportError):
            continue
        doc = getdoc(obj)
        if not doc and not isinstance(obj, bytes):
            continue
        m = module_of(q)
        tags = [MODULE_CATEGORY.get(m, "Runtime")]
        for t in TOPICS:
            cat = {"regex": "Text_processing", "unicode": "Unicode_and_encodings",
                   "sockets": "Networking", "timezones": "Dates_and_times",
                   "threads": "Concurrency"}[t["id"]]
            if cat not in tags and re.search(t["pattern"], doc, re.I):
                tags.append(cat)
        year, month, day = 2021 + i // 40, 1 + (i // 4) % 12, 1 + (i * 7) % 28
        path = f"/{year}/{month:02d}/{slug(q)}.html"
        b.posts.append({"q": q, "obj": obj, "doc": doc, "module": m, "tags": tags,
                           "path": path, "date": f"{year}-{month:02d}-{day:02d}",
                           "title": f"A closer look at {q}"})
    b.posts.sort(key=lambda p: (p["date"], p["q"]), reverse=True)

def build_blog(b: Builder) -> None:
    n = len(b.posts)
    for i, p in enumerate(b.posts):
        obj, q = p["obj"], p["q"]
        doc = p["doc"] or f"{q} = {obj!r}"
        parts = [f"<article><h1>{esc(p['title'])}</h1>",
                 f'<p class="meta">Posted on {p["date"]} in '
                 + ", ".join(f'<a class="tag" href="/tags/{t}.html">{esc(CATEGORIES[t][0])}'
                             "</a>" for t in p["tags"]) + "</p>",
                 f"<p>Today's note is about <code>{esc(q)}{esc(signature(obj))}</code>, "
                 f"from the <code>{esc(p['module'])}</code> module"
                 + (f" ({esc(b.synopsis(p['module']))})" if b.synopsis(p["module"])
                    else "") + ". Here is what its documentation says:</p>",
                 f"<blockquote>{text_html(doc, 3500)}</blockquote>",
                 ]
        more = (f'<p>Read more in the <a href="{docs_url(p["module"])}">'
                f"{esc(p['module'])} documentation</a>")
        wiki_cls = q.rsplit(".", 1)[0]
        if q in b.articles or wiki_cls in b.articles:
            target = q if q in b.articles else wiki_cls
            more += (f' and the wiki article on <a href="http://{WIKI}'
                     f'{wiki_article_path(target)}">{esc(target)}</a>')
        parts.append(more + ".</p>")
        lessons = b.lessons_by_module.get(p["module"], [])
        if lessons:
            lp, lt = lessons[0]
            parts.append(f'<p>There is a lesson on this too: <a href="http://{TUT}{lp}">'
                         f"{esc(lt)}</a>.</p>")
        pager = []
        if i + 1 < n:
            nxt = b.posts[i + 1]
            pager.append(f'<a href="{nxt["path"]}">Older: {esc(nxt["title"])}</a>')
        if i > 0:
            prv = b.posts[i - 1]
            pager.append(f'<a href="{prv["path"]}">Newer: {esc(prv["title"])}</a>')
        parts.append('<p class="pager">' + " · ".join(pager) + "</p></article>")
        parts.append(b.offtopic.around(p["path"]))
        b.site.add(BLOG, p["path"], p["title"], "\n".join(parts), junk=True,
                      description=first_para(doc, 160))
    per = 15
    pages = [b.posts[i:i + per] for i in range(0, n, per)]
    for k, chunk in enumerate(pages, 1):
        path = "/index.html" if k == 1 else f"/page/{k}.html"
        rows = [(p["path"], p["title"], first_para(p["doc"], 160) if p["doc"] else "")
                for p in chunk]
        pager = []
        if k > 1:
            pager.append('<a href="/index.html">Newest</a>' if k == 2 else
                         f'<a href="/page/{k - 1}.html">Newer posts</a>')
        if k < len(pages):
            pager.append(f'<a href="/page/{k + 1}.html">Older posts</a>')
        b.site.add(BLOG, path, "Snake Notes" + (f" — page {k}" if k > 1 else ""),
                      "<h1>Snake Notes</h1>\n<p>Short notes on one corner of the standard "
                      "library at a time.</p>\n" + links_list(rows)
                      + '<p class="pager">' + " · ".join(pager) + "</p>", junk=True)
    tags = sorted({t for p in b.posts for t in p["tags"]})
    for t in tags:
        rows = [(p["path"], p["title"], p["date"]) for p in b.posts if t in p["tags"]]
        b.site.add(BLOG, f"/tags/{t}.html", f"Posts tagged {CATEGORIES[t][0]}",
                      f"<h1>Posts about {esc(CATEGORIES[t][0])}</h1>\n" + links_list(rows)
                      + f'<p>See also the wiki portal: <a href="http://{WIKI}/wiki/{t}.html">'
                      f"{esc(CATEGORIES[t][0])}</a></p>", junk=True)
    b.site.add(BLOG, "/tags/index.html", "Tags", "<h1>Tags</h1>\n" + links_list(
        (f"/tags/{t}.html", CATEGORIES[t][0], "") for t in tags), junk=True)
    b.site.add(BLOG, "/about.html", "About this blog",
                  "<h1>About</h1>\n<p>A blog of notes on the Python standard library, "
                  "quoting its documentation.</p>\n" + text_html(clean(sys.copyright)),
                  junk=True)
    b.site.redirects[BLOG] = {"/latest.html": {"location": b.posts[0]["path"],
                                                  "status": 302}}

# -- news
def build_news(b: Builder) -> None:
    idle = Path(sysconfig.get_paths()["stdlib"]) / "idlelib"
    releases: list[tuple[str, str, list[str]]] = []
    for fname in ("NEWS.txt", "NEWS2x.txt"):
        f = idle / fname
        if not f.is_file():
            continue
        text = clean(f.read_text("utf-8", "replace"))
        for sec in re.split(r"\n(?=What's New in IDLE )", "\n" + text):
            sec = sec.strip()
            if not sec.startswith("What's New in IDLE"):
                continue
            lines = sec.split("\n")
            head = lines[0].strip()
            version = re.search(r"IDLE ([0-9][\w.]*)", head)
            ver = version.group(1).rstrip(".?") if version else str(len(releases))
            rest = "\n".join(ln for ln in lines[1:] if not re.fullmatch(r"=+", ln.strip()))
            items = [" ".join(p.split()) for p in paragraphs(rest)]
            releases.append((ver, head, items))
    rel_rows: list[tuple[str, str, str]] = []
    for ver, head, items in releases:
        chunks = [items[i:i + 18] for i in range(0, len(items), 18)] or [[]]
        for k, chunk in enumerate(chunks, 1):
            path = f"/releases/{slug(ver)}.html" if k == 1 else \
                f"/releases/{slug(ver)}-{k}.html"
            pager = []
            if k > 1:
                pager.append(f'<a href="{slug(ver)}.html">Part 1</a>')
            if k < len(chunks):
                pager.append(f'<a href="{slug(ver)}-{k + 1}.html">More changes</a>')
            body = (f"<h1>{esc(head)}</h1>\n" + "\n".join(f"<p>{esc(it)}</p>" for it in chunk)
                    + '\n<p class="pager">' + " · ".join(pager) + "</p>")
            b.site.add(NEWS, path, head + (f" (part {k})" if k > 1 else ""), body,
                          ticker=(len(rel_rows) % 3 == 0))
            if k == 1:
                rel_rows.append((path, head, first_para(chunk[0], 140) if chunk else ""))
    b.site.add(NEWS, "/releases/index.html", "IDLE releases",
                  "<h1>What's new in IDLE</h1>\n" + links_list(rel_rows), ticker=True)
    idle_rows = []
    for fname, title in (("HISTORY.txt", "IDLE history"), ("README.txt", "About IDLE"),
                         ("CREDITS.txt", "IDLE credits"), ("TODO.txt", "IDLE to-do list")):
        f = idle / fname
        if f.is_file():
            b.site.add(NEWS, f"/idle/{slug(title)}.html", title,
                          f"<h1>{esc(title)}</h1>\n" + text_html(
                              clean(f.read_text("utf-8", "replace")), 20000, 2))
            idle_rows.append((f"/idle/{slug(title)}.html", title, ""))
    # weekly digests: posts of the week, plus docs pages they mention
    weekly = []
    by_date = sorted(b.posts, key=lambda p: (p["date"], p["q"]))
    for w, i in enumerate(range(0, len(by_date), 5), 1):
        week = by_date[i:i + 5]
        rows = [(f"http://{BLOG}{p['path']}", p["title"], first_para(p["doc"], 200)
                 if p["doc"] else "") for p in week]
        mods = list(dict.fromkeys(p["module"] for p in week))
        body = (f"<h1>Python weekly #{w}</h1>\n<p>This week on the blogs: "
                + ", ".join(esc(p["q"]) for p in week) + ".</p>\n" + links_list(rows)
                + "<h2>In the docs</h2>\n" + links_list(
                    (docs_url(m), m, b.synopsis(m)) for m in mods))
        b.site.add(NEWS, f"/weekly/{w}.html", f"Python weekly #{w}", body,
                      ticker=(w % 4 == 0))
        weekly.append((f"/weekly/{w}.html", f"Python weekly #{w}", week[0]["date"]))
    b.site.add(NEWS, "/weekly/index.html", "Python weekly",
                  "<h1>Python weekly</h1>\n" + links_list(weekly))
    b.site.add(NEWS, "/index.html", "News",
                  "<h1>IDLE &amp; Python news</h1>\n<h2>Latest releases</h2>\n"
                  + links_list(rel_rows[:6]) + "<h2>Latest digests</h2>\n"
                  + links_list(weekly[::-1][:6]) + "<h2>About IDLE</h2>\n"
                  + links_list(idle_rows), ticker=True)
    b.site.add(NEWS, "/about.html", "About the news",
                  "<h1>About</h1>\n<p>Release notes of IDLE, the editor shipped with "
                  "Python, and weekly digests of the blogs.</p>")
    b.site.redirects[NEWS] = {"/docs.html": f"http://{DOCS}/index.html"}


def visible_text(page: str) -> str:
    """Text of a page without tags, scripts and styles (for the topic summary)."""
    page = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page)
    return html.unescape(re.sub(r"(?s)<[^>]+>", " ", page))


def write(site: Site, out: Path) -> dict[str, Any]:
    if out.exists():
        shutil.rmtree(out)
    for (host, path), text in list(site.pages.items()) + list(site.extra.items()):
        f = out / host / path.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, "utf-8")
    for host, red in site.redirects.items():
        (out / host / "_redirects.json").write_text(json.dumps(red, indent=1, sort_keys=True)
                                                    + "\n", "utf-8")
    for host, text in site.robots.items():
        (out / host / "robots.txt").write_text(text, "utf-8")
    topics = {}
    for t in TOPICS:
        hits = sorted(f"http://{h}{p}" for (h, p), page in site.pages.items()
                      if re.search(t["pattern"], visible_text(page), re.I))
        topics[t["id"]] = {"query": t["query"], "pages_mentioning": len(hits)}
    meta = {
        "generated_with_python": sys.version.split()[0],
        "hosts": {h: sum(1 for (hh, _) in site.pages if hh == h) for h in SITE_NAMES},
        "pages": len(site.pages),
        "redirects": {h: sorted(r) for h, r in site.redirects.items()},
        "robots": site.robots,
        "seeds": SEEDS,
        "topics": topics,
    }
    (out / "demo.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", "utf-8")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m focuscrawl.demo.generate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(site_dir()), help=f"output directory ({site_dir()})")
    args = ap.parse_args(argv)
    meta = write(Builder().build(), Path(args.out))
    size = sum(f.stat().st_size for f in Path(args.out).rglob("*") if f.is_file())
    print(json.dumps({k: meta[k] for k in ("hosts", "pages", "topics")}, indent=1))
    print(f"{size / 1e6:.2f} MB in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
