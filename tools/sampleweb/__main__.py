"""``python -m tools.sampleweb generate|serve|evaluate``."""
from __future__ import annotations

import argparse
import json
import sys
import time

from . import DEFAULT_BASE_URL, evaluate, generate, serve


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.sampleweb", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the sample web into a folder")
    g.add_argument("--out", required=True, help="output folder (new, empty, or an earlier sample web)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--base-url", default=DEFAULT_BASE_URL,
                   help="where the folder will be served (page and image URLs use it)")
    s = sub.add_parser("serve", help="serve a generated folder over HTTP until interrupted")
    s.add_argument("dir")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8642)
    e = sub.add_parser("evaluate", help="precision/recall of parquet shards against truth.jsonl")
    e.add_argument("shards_dir")
    e.add_argument("truth")
    args = ap.parse_args(argv)

    if args.cmd == "generate":
        t0 = time.perf_counter()
        site = generate(args.out, seed=args.seed, base_url=args.base_url)
        site.pop("images")
        site["seconds"] = round(time.perf_counter() - t0, 2)
        print(json.dumps(site, indent=1, sort_keys=True))
    elif args.cmd == "serve":
        server = serve(args.dir, host=args.host, port=args.port)
        host, port = server.server_address[:2]
        print(f"serving {args.dir} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.shutdown()
            server.server_close()
    else:
        print(json.dumps(evaluate(args.shards_dir, args.truth), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
