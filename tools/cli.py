"""The `lait` command line.

Every user error (a bad option, a missing file, an unknown config key) ends in one line on
stderr naming what and where, and exit status 2; `-v` shows the traceback as well.  Engine
options (Beam's PipelineOptions, Spark's --master) come after a `--` separator, so that a
mistyped option of `lait build` itself is an error rather than something the engine ignores.
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import traceback

from pipeline.build import ENGINES, build, spark_options
from pipeline.core import overrides as overrides_mod
from pipeline.core import storage
from pipeline.core.errors import ConfigError, RunFailed, StorageFailed, UsageError, exception_chain
from pipeline.core.stats import format_funnel, read_stats
from pipeline.web.failures import is_transient
from tools import demo, report
from tools.report_reasons import describe, reason_counts

# Options people pass to an engine out of habit; before `--` they get a hint, not just "unknown".
ENGINE_FLAGS = ("--runner", "--master", "--project", "--region", "--temp_location",
                "--flink_master", "--parallelism", "--environment_type", "--num_workers")


def version() -> str:
    """The installed package's version; from a plain checkout, setup.py's."""
    from importlib import metadata
    try:
        return metadata.version("lait-builder")
    except metadata.PackageNotFoundError:
        setup_py = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "setup.py")
        try:
            with open(setup_py, encoding="utf-8") as f:
                m = re.search(r'version="([^"]+)"', f.read())
        except OSError:
            m = None
        return m.group(1) if m else "unknown"


def _cmd_build(args) -> int:
    if args.config is None and not args.input:
        raise UsageError("build: give --config FILE.yaml, or --input WARC... for a run on the defaults")
    overrides = overrides_mod.parse(args.set)
    if args.input:
        overrides["input.warc"] = list(args.input)
    doc = build(args.config, args.out, engine=args.engine, engine_args=args.engine_args,
                overrides=overrides, retry_failed=args.retry_failed)
    print(format_funnel(doc))
    samples = next((s["kept"] for s in doc["steps"] if s["name"] == "write"), 0)
    # an empty run makes no shards folder: naming one sent the user looking for it
    print("\nshards: " + (storage.join(storage.absolute(args.out), "shards") if samples
                          else "none written (0 samples)"))
    retryable = doc.get("retryable", {}).get("fetch", 0)
    if retryable:
        # the reasons counted, not a fixed list: a run with no internet fails on DNS only
        fetch = next((s for s in doc["steps"] if s["name"] == "fetch"), {"dropped": {}})
        why = ", ".join(f"{r}: {n}" for r, n in sorted(fetch["dropped"].items(), key=lambda x: (-x[1], x[0]))
                        if is_transient(r.removeprefix("fetch_")))
        then = ("they failed again on this retry: check the machine's network (DNS, proxy), "
                "then run this command again" if args.retry_failed else
                "run the same command with --retry-failed to fetch those images again")
        print(f"lait: build: {retryable} candidates were dropped by network failures"
              f"{f' ({why})' if why else ''}; {then}", file=sys.stderr)
    if not samples and not args.allow_empty:
        first = doc["steps"][0] if doc["steps"] else {"name": "read", "in": 0}
        if not first.get("in"):  # nothing was dropped: "where everything was dropped" misleads
            where = (f"the {first['name']} step read nothing from the "
                     f"{len(doc.get('inputs', []))} input part(s): "
                     + ("no page fetched from the seeds" if first["name"] == "crawl" else
                        "empty files, or no HTTP response record in them"))
        else:
            where = "see the funnel above for where everything was dropped"
        print(f"lait: build: the corpus is empty (0 samples); {where} (--allow-empty makes "
              "this exit 0)", file=sys.stderr)
        return 1
    return 0


def _cmd_stats(args) -> int:
    path = args.dir if args.dir.endswith(".json") else storage.join(args.dir, "stats.json")
    if not storage.exists(path):
        raise UsageError(f"stats: {path}: no such file (is {args.dir} the --out of a finished build?)")
    try:
        doc = read_stats(path)
    except UsageError as exc:
        raise UsageError(f"stats: {exc}") from None
    print(format_funnel(doc))
    if args.why:  # what each reason counted above means (the report's "why" column)
        print("\nwhy:")
        for r in reason_counts(doc["steps"]):
            print(f"  {r}: {describe(r)}")
    return 0


def _cmd_hashes(args) -> int:
    """pHashes of a folder (or webdataset shard) of images, for ``dedup.exclude``."""
    from filters.eval_images import hash_images

    if not (os.path.isdir(args.dir) or (os.path.isfile(args.dir) and args.dir.endswith(".tar"))):
        raise UsageError(f"hashes: {args.dir}: not a folder or a .tar shard of images")
    got, bad = hash_images(args.dir, args.longest)
    if not got:
        raise UsageError(f"hashes: {args.dir}: no decodable images")
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"# pHashes (imagehash, stored longest side {args.longest}) of {len(got)} "
                f"images in {os.path.abspath(args.dir)}\n")
        for h, name in got:
            f.write(f"{h:016x}\t{name}\n")
    os.replace(tmp, args.out)
    for name in bad:
        print(f"hashes: cannot decode {name}", file=sys.stderr)
    print(f"{len(got)} images hashed into {args.out}" + (f", {len(bad)} undecodable" if bad else ""))
    return 0


def _cmd_config(args) -> int:
    from tools import config_doc  # reads the config classes' source: only for this command

    if not args.defaults:
        raise UsageError("config: give --defaults (every key with its default, as YAML)")
    sys.stdout.write(config_doc.defaults_yaml())
    return 0


def _cmd_report(args) -> int:
    return report.main(args)


def _cmd_demo(args) -> int:
    return demo.main(args, lait=main)


ENGINE_HELP = ("beam (default: Apache Beam, FnApiRunner in-process unless -- --runner=...), "
               "spark (Spark local[*] unless -- --master URL), local (one process, no engine: "
               "for tests and debugging)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lait", description="Build a LAIT-style image-text corpus "
                                "from web crawls, and pre-train ImageBERT on it.")
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more logging (-vv: debug); tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)

    b = sub.add_parser(
        "build", help="run the pipeline: WARCs (or a crawl) -> webdataset shards + stats.json",
        description="Run the pipeline and write OUT/shards (webdataset tars), OUT/parquet, OUT/stats.json, OUT/rejects.parquet.",
        epilog="Engine options go after a `--` separator and are passed on untouched: to "
               "Beam's PipelineOptions (e.g. -- --runner=FlinkRunner --flink_master=HOST:8081) "
               "or, for Spark, --master URL and --conf KEY=VALUE (e.g. -- --master "
               "spark://HOST:7077 --conf spark.executorEnv.PYTHONPATH=/opt/lait).  Examples:  "
               "lait build --config configs/demo.yaml --out out/run1 --set text.min_words=1;  "
               "lait build --input 'crawl/*.warc.gz' --out out/quick --engine local")
    b.add_argument("--config", metavar="FILE.yaml",
                   help="the run's configuration (every key: docs/config.md, or lait config --defaults); optional with --input")
    b.add_argument("--out", required=True, metavar="DIR",
                   help="output directory; a rerun into the same DIR resumes the unfinished work")
    b.add_argument("--engine", default="beam", choices=list(ENGINES), help=ENGINE_HELP)
    b.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, validated like the YAML (dotted key, YAML "
                        "value), e.g. --set text.min_words=1; repeatable")
    b.add_argument("--input", nargs="+", metavar="WARC",
                   help="WARC paths or globs: sets input.warc (with no --config, on the defaults)")
    b.add_argument("--retry-failed", action="store_true",
                   help="fetch again the image buckets whose fetches failed for a network "
                        "cause in an earlier run into the same --out (finished work is "
                        "otherwise never redone)")
    b.add_argument("--allow-empty", action="store_true",
                   help="exit 0 even when the corpus has no samples (default: exit 1)")
    b.set_defaults(func=_cmd_build, passthrough=True)

    s = sub.add_parser("stats", help="print the filter funnel of a built corpus")
    s.add_argument("dir", help="the output directory (or its stats.json)")
    s.add_argument("--why", action="store_true", help="also say what each drop reason means")
    s.set_defaults(func=_cmd_stats)

    c = sub.add_parser("config", help="print the configuration's keys (docs/config.md)")
    c.add_argument("--defaults", action="store_true",
                   help="print every key with its default and meaning, as YAML that loads back")
    c.set_defaults(func=_cmd_config)

    r = sub.add_parser("report", help="write DIR/report.html: funnel, drop reasons, histograms, samples")
    r.add_argument("dir", help="the output directory of a build")
    r.set_defaults(func=_cmd_report)

    h = sub.add_parser("hashes", help="write the pHashes of a folder of images (for dedup.exclude)")
    h.add_argument("dir", help="a folder of images (searched recursively) or a webdataset .tar")
    h.add_argument("-o", "--out", required=True, help="the hash file to write")
    h.add_argument("--longest", type=int, default=512,
                   help="the build's image.resize_longest (images are hashed as stored)")
    h.set_defaults(func=_cmd_hashes)

    d = sub.add_parser("demo", help="generate the sample web, serve it, build it with Beam",
                       epilog="Engine options go after `--`, as for lait build.")
    d.add_argument("--out", default="out/demo", help="output directory of the build")
    d.add_argument("--web", default="out/sample-web", help="where the sample web is generated")
    d.add_argument("--config", default="configs/demo.yaml", help="the build's configuration")
    d.add_argument("--engine", default="beam", choices=list(ENGINES), help=ENGINE_HELP)
    d.add_argument("--port", type=int, default=8642, help="port on 127.0.0.1 serving the images")
    d.add_argument("--no-train", action="store_true", help="skip the trainer part of the demo")
    d.set_defaults(func=_cmd_demo, passthrough=True)

    try:  # the trainer's commands (features, train, eval) live with the model; imported here
        # because the model needs torch, which a pipeline-only install may lack
        from model.commands import register
    except ImportError:
        pass
    else:
        register(sub)
    for command in sub.choices.values():  # `lait build ... -v` works as well as `lait -v build`
        command.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                             help="more logging (-vv: debug); tracebacks on errors")
    return p


def _split_engine_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """Everything after the first `--` is the engine's."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _unknown(p: argparse.ArgumentParser, args, extra: list[str]) -> None:
    """Reports options no parser knows (exit 2), with a hint for engine options."""
    engine_like = [a for a in extra if a.split("=", 1)[0] in ENGINE_FLAGS]
    hint = ""
    if engine_like and getattr(args, "passthrough", False):
        hint = (f" (engine options go after a `--` separator: lait {args.command} ... -- "
                f"{' '.join(engine_like)} ...)")
    if getattr(args, "command", None) == "build" and "--resume" in extra:
        hint += (" (a build has no --resume: run the same command again, with the same --out, "
                 "and it goes on from its finished waves; --retry-failed also fetches again the "
                 "images that failed for a network cause)")
    # Report through the subcommand's parser: its usage lists the options the user was typing
    # (the top-level usage lists only the subcommands).
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    sub = subs[0].choices.get(getattr(args, "command", None)) if subs else None
    (sub or p).error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    argv, engine_args = _split_engine_args(argv)
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra:
        _unknown(p, args, extra)
    if engine_args and not getattr(args, "passthrough", False):
        p.error(f"{args.command} takes no engine options (after `--`): {' '.join(engine_args)}")
    args.engine_args = engine_args
    _setup_logging(args.verbose)
    _local_spark_env(getattr(args, "engine", None), engine_args)
    try:
        rc = args.func(args)
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at exit
        return rc
    except BrokenPipeError:
        # The reader stopped reading (`lait stats out | head`): not an error.  Point stdout at
        # /dev/null so that Python's flush at exit does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ConfigError as exc:  # the trainer's ConfigError is a subclass
        return _user_error(args, f"configuration error: {exc}")
    except UsageError as exc:
        return _user_error(args, str(exc))
    except KeyboardInterrupt:
        # Ctrl-C: one line, and the exit status a shell gives SIGINT, not a traceback.
        if args.verbose:
            traceback.print_exc()
        again = _RESUMES.get(args.command, "")
        print(f"lait: {args.command}: interrupted{again}", file=sys.stderr)
        return 130
    except RunFailed as exc:  # e.g. disk full: exit 1, the run stays resumable
        if args.verbose:
            traceback.print_exc()
        print(f"lait: {args.command}: {exc}", file=sys.stderr)
        return 1
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError,
            FileExistsError) as exc:
        if _reads_a_store(args):  # s3fs's PermissionError says only "Forbidden"
            return _store_error(args, exc)
        # A path the user gave that is missing or unusable: the exception names it.
        return _user_error(args, f"{args.command}: {exc}")
    except Exception as exc:  # noqa: BLE001 (each store raises its own types)
        # stats and report read a run where it lives: a store that cannot be reached (down,
        # a wrong AWS_ENDPOINT_URL) is one line, not the backend's 90-line traceback.
        if _reads_a_store(args):
            return _store_error(args, exc)
        raise


def _reads_a_store(args) -> bool:
    return args.command in ("stats", "report") and storage.is_url(getattr(args, "dir", ""))


def _store_error(args, exc: BaseException) -> int:
    """stats/report of a run on a store that refused or failed: the run's URL and what kind
    of failure (forbidden, no credentials, ...), in one line."""
    kind = storage.failure_kind(exc).replace("_", " ")
    return _user_error(args, f"{args.command}: cannot read {args.dir}: {kind} "
                             f"({type(exc).__name__}: {exc})")


def _user_error(args, message: str) -> int:
    """One line on stderr, exit 2; with -v, the traceback first."""
    if args.verbose:
        traceback.print_exc()
    print(f"lait: {message}", file=sys.stderr)
    return 2


# Warnings a user can do nothing about, dropped unless -vv: Beam logs this on the root logger
# whenever it is imported without the (GCP-only) apitools package, which a local run never uses.
UNACTIONABLE = ("apitools not found",)


def _drop_unactionable(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(UNACTIONABLE)


# What a Ctrl-C leaves, per command that resumes: without it "interrupted" read as "lost".
_RESUMES = {
    "build": ": its finished waves are kept: run the same command again to resume",
    "train": ": its last checkpoint is kept: run the same command again to resume from it",
    "finetune": ": its last checkpoint is kept: run the same command again to resume from it",
    "features": ": the shards it finished are kept: run the same command again to do the rest",
}


def _drop_reported_failure(record: logging.LogRecord) -> bool:
    """Beam logs an exception raised in a DoFn, with its traceback, before the pipeline fails:
    a failed write (a full disk, the object store gone) printed some 150 lines above the one
    line that `main` prints for the RunFailed it becomes (a Ctrl-C: its KeyboardInterrupt).
    `-v` keeps them."""
    if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
        return False
    return not isinstance(record.msg, StorageFailed)


def _drop_interrupt(record: logging.LogRecord) -> bool:
    """A Ctrl-C on Spark lands in pyspark's SIGINT handler during a py4j call, and py4j logs
    it on the root logger with some 45 lines of chained tracebacks above the one line that
    `main` prints: "KeyboardInterrupt while sending command.", and before it "Exception while
    sending command." for the py4j call the handler's own call re-entered ("reentrant call").
    `-v` keeps them."""
    return not any(isinstance(e, KeyboardInterrupt) or str(e).startswith("reentrant call")
                   for e in exception_chain(record.exc_info[1] if record.exc_info else None, limit=10))


def _setup_logging(verbose: int) -> None:
    """Quiet by default (warnings the user can act on); -v: INFO, -vv: DEBUG."""
    level = logging.WARNING if not verbose else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if verbose < 2 and _drop_unactionable not in logging.getLogger().filters:
        logging.getLogger().addFilter(_drop_unactionable)
    if not verbose and _drop_interrupt not in logging.getLogger().filters:
        logging.getLogger().addFilter(_drop_interrupt)
    beam_runner = logging.getLogger("apache_beam.runners.common")
    if not verbose and _drop_reported_failure not in beam_runner.filters:
        beam_runner.addFilter(_drop_reported_failure)


def _local_spark_env(engine: str, engine_args: list[str]) -> None:
    """Spark in local mode, as the Makefile runs it: bound to loopback (otherwise Spark warns
    that the hostname resolves to a loopback address and picks an interface itself), and the
    workers on this Python.  A value the user set wins; a cluster (--master URL, spark-submit)
    is left alone."""
    if engine != "spark":
        return
    try:
        master = spark_options(engine_args)[0]
    except ConfigError:
        return  # build() reports it (exit 2) before any session starts
    if master and not master.startswith("local"):
        return
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # under spark-submit: its settings rule
        return
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

if __name__ == "__main__":
    sys.exit(main())
