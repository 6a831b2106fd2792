"""``python -m focuscrawl.demo serve|seeds|topics|generate``: the offline demo web.

    python -m focuscrawl.demo serve [--port 8800] [--log FILE] [--delay-ms MS]
    python -m focuscrawl.demo seeds
"""

from __future__ import annotations

import argparse
import sys

from focuscrawl.demo import HOSTS, TOPICS, ensure_site, seeds, site_dir


def _serve(args: argparse.Namespace) -> int:
    from focuscrawl.demo.webserver import (
        HostOptions,
        Sites,
        WebServer,
        changing_web,
        load_config,
        serve_until_signal,
    )

    sites = Sites(root=ensure_site())
    defaults, per_host = load_config(args.config, HostOptions(delay_ms=args.delay_ms,
                                                              jitter_ms=args.jitter_ms))
    server = WebServer(sites, options=per_host, defaults=defaults, log_path=args.log,
                       port=args.port,
                       changing=changing_web(args.changing) if args.changing else None)
    try:
        server.start()
    except OSError as e:
        print(f"cannot listen on 127.0.0.1:{args.port}: {e} (try --port 0)", file=sys.stderr)
        return 1
    proxy = f"http://127.0.0.1:{server.port}"

    def ready() -> None:
        print(f"Serving the focuscrawl demo web ({len(sites.hosts)} hosts) on {proxy}")
        print("Hosts: " + ", ".join(sites.hosts))
        print("Point the crawler at it through the proxy variable, in another shell:")
        print(f"  export http_proxy={proxy}")
        print("Seed URLs:")
        for s in seeds():
            print(f"  {s}")
        print("Topics with clear clusters: " + "; ".join(t["query"] for t in TOPICS))
        if args.log:
            print(f"Access log: {args.log}")
        if args.changing:
            print(f"Pages change as time goes; the truth: {proxy}/_changes.json")
        print("Stop with Ctrl-C.", flush=True)

    serve_until_signal(server, ready=ready)
    return 0


def _seeds(args: argparse.Namespace) -> int:
    for s in seeds():
        print(s)
    return 0


def _topics(args: argparse.Namespace) -> int:
    for t in TOPICS:
        print(f"{t['id']}\t{t['query']}\t{t['keywords']}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from focuscrawl.demo.generate import main as generate_main

    return generate_main(["--out", args.out])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m focuscrawl.demo",
                                 description="The offline demo web: "
                                 + ", ".join(HOSTS.values()))
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("serve", help="serve the demo web on 127.0.0.1 (proxy mode)")
    sp.add_argument("--port", type=int, default=8800, help="port (default 8800; 0: any free)")
    sp.add_argument("--log", help="access log (TSV, see focuscrawl.demo.webserver)")
    sp.add_argument("--delay-ms", type=float, default=0.0, help="latency of every response")
    sp.add_argument("--jitter-ms", type=float, default=0.0, help="plus uniform(0, J) ms")
    sp.add_argument("--config", help='per-host options {"defaults": {...}, "hosts": {...}}')
    sp.add_argument("--changing", metavar="JSON",
                    help="pages change as time goes (focuscrawl.demo.changing): a JSON object "
                    "of options or a file, '{}' for the defaults")
    sp.set_defaults(func=_serve)
    sub.add_parser("seeds", help="print the seed URLs, one per line").set_defaults(func=_seeds)
    sub.add_parser("topics", help="print the demo topics: id, query, keywords").set_defaults(
        func=_topics)
    gp = sub.add_parser("generate", help="regenerate the site from this Python's docs")
    gp.add_argument("--out", default=str(site_dir()))
    gp.set_defaults(func=_generate)
    args = ap.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
