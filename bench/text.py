"""Texts per second on ONE core for the ``text`` step (sentence selection, cleaning rules,
fastText language id, wordfreq OOV ratio) over the candidates extracted from
``../shared/data/real_pages``.

Usage: ``python bench/text.py [--passes N] [--against GIT_REF]``.  Pinned to one CPU with one
thread per native library.  Candidates come from the real pipeline's first steps
(``PageLanguage`` off, so every page's texts count, and ``Extractor``).  Two paths are timed
side by side on the same candidates:

* ``single``: ``TextCleaner.events`` per candidate (a batch of one);
* ``batched``: ``TextCleaner.events_batch`` over ``batch_size`` candidates at a time, exactly
  what the executor runs on every engine (the headline).

The first pass (cold wordfreq cache) is reported alone; the steady-state figure is the best of
the later passes, each started with an EMPTY result cache, so repeats only count within one
pass (as on a worker: the web repeats alt texts), never across passes.  fastText alone on the
same texts is timed for scale, and a fixed pure-Python loop (``reference_loop_s``) plus the
load average show how busy the machine was.  ``compiled`` says whether the compiled fastText
predictor (``filters/_fastlid.pyx``) answered, or fastText's binding; where it did, the two
are also timed side by side on the same distinct texts (``fasttext_compiled_ratio_cpu``).  Process CPU time is
reported beside wall time (``*_cpu``): on a shared machine it stays close to what an idle
core would do.

``--against REF`` also runs the text step of git revision REF (its ``filters/`` and
``pipeline/``) in a subprocess, alternating with this tree's, and reports both and whether the
two decide the same on every candidate.  The LAST line printed is a JSON object.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = os.path.join(HERE, "..", "shared", "data", "real_pages")


def candidates(english_only: bool):
    from filters.language import PageLanguage
    from pipeline.steps.extract import Extractor
    from pipeline.core.records import Page
    from pipeline.core.stage import Keep

    lang, ext = PageLanguage(), Extractor()
    out = []
    for name in sorted(os.listdir(PAGES)):
        if not name.endswith(".html"):
            continue
        with open(os.path.join(PAGES, name), "rb") as f:
            page = Page(url=f"https://{name[:-5]}/", body=f.read(), content_type="text/html")
        if english_only and not isinstance(next(lang.events(page)), Keep):
            continue
        ev = next(ext.events(page))
        out.extend(ev.outputs if isinstance(ev, Keep) else ())
    return out


def run_single(stage, cands) -> list:
    return [ev for c in cands for ev in stage.events(c)]


def run_batched(stage, cands) -> list:
    n, out = stage.batch_size, []
    for i in range(0, len(cands), n):
        out.extend(stage.events_batch(cands[i:i + n]))
    return out


def timed(stage, run, cands) -> tuple[float, float, list]:
    if hasattr(stage, "clear_cache"):
        stage.clear_cache()  # time the work, not the cache of the previous pass
    w0, c0 = time.perf_counter(), time.process_time()
    events = run(stage, cands)
    return time.perf_counter() - w0, time.process_time() - c0, events


def digest(events) -> str:
    """A hash of every decision (reason, or kept records with their meta key order)."""
    from pipeline.core.stage import Keep

    h = hashlib.sha256()
    for ev in events:
        data = ([(dataclasses.asdict(o), list(o.meta)) for o in ev.outputs]
                if isinstance(ev, Keep) else ev.reason)
        h.update(pickle.dumps(data, protocol=4))
    return h.hexdigest()[:16]


def measure(passes: int) -> dict:
    from filters.text import TextCleaner
    from pipeline.core.stage import Keep

    t0 = time.perf_counter()
    sum(range(10_000_000))  # a fixed pure-Python loop: recognises busy or different machines
    result = {"cores": 1, "reference_loop_s": round(time.perf_counter() - t0, 3),
              "load_avg_1m": round(os.getloadavg()[0], 2)}
    for label, english_only in (("english_pages", True), ("all_pages", False)):
        cands = candidates(english_only)
        stage = TextCleaner()
        stage.setup()
        paths = {"single": run_single}
        if hasattr(stage, "events_batch"):
            paths = {"batched": run_batched, **paths}  # the pipeline's path first: it runs cold
        r = {"candidates": len(cands),
             "by_source": dict(sorted(Counter(c.text_source for c in cands).items()))}
        best = {}
        for name, run in paths.items():
            wall, _, events = timed(stage, run, cands)
            r.setdefault("texts_per_s_cold", round(len(cands) / wall))  # cold wordfreq cache
            r[f"{name}_digest"] = digest(events)
            best[name] = [1e9, 1e9]
        for _ in range(max(1, passes - 1)):  # interleaved, so both see the same machine load
            for name, run in paths.items():
                wall, cpu, _ = timed(stage, run, cands)
                best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
        for name, (wall, cpu) in best.items():
            r[f"{name}_texts_per_s"] = round(len(cands) / wall)
            r[f"{name}_texts_per_s_cpu"] = round(len(cands) / cpu)
        reasons = Counter("kept" if isinstance(ev, Keep) else ev.reason for ev in events)
        r.update(kept=reasons["kept"], dropped=sum(reasons.values()) - reasons["kept"])
        texts = [c.text[: stage.config.lang_max_chars].lower() for c in cands]
        t0 = time.perf_counter()
        for t in texts:
            stage._lid.fasttext(t)
        r["fasttext_only_texts_per_s"] = round(len(texts) / (time.perf_counter() - t0))
        ft, lean = getattr(stage._lid, "_ft", None), getattr(stage._lid, "_lean", None)
        if ft is not None and lean is not None:  # --against: older revisions lack them
            # The compiled predictor against fastText's binding (LanguageId's fallback) on the
            # same distinct lines, one model call each as the text step makes per batch,
            # interleaved, best CPU time of each: the README's ratio between the two
            lines = list(dict.fromkeys(t.replace("\n", " ") + "\n" for t in texts))
            best_ft = {"compiled": 1e9, "binding": 1e9}
            for _ in range(max(5, passes)):
                c0 = time.process_time()
                lean.predict(lines)
                c1 = time.process_time()
                ft.f.multilinePredict(lines, 1, 0.0, "strict")
                c2 = time.process_time()
                best_ft = {"compiled": min(best_ft["compiled"], c1 - c0),
                           "binding": min(best_ft["binding"], c2 - c1)}
            r["fasttext_compiled_texts_per_s_cpu"] = round(len(lines) / best_ft["compiled"])
            r["fasttext_binding_texts_per_s_cpu"] = round(len(lines) / best_ft["binding"])
            r["fasttext_compiled_ratio_cpu"] = round(best_ft["binding"] / best_ft["compiled"], 2)
        result[label] = r
        print(label, json.dumps(r), file=sys.stderr)
    # The headline: the path the pipeline runs, steady state over every page's candidates.
    top = "batched" if "batched_texts_per_s" in result["all_pages"] else "single"
    result["path"] = top
    # Which fastText predictor ran: the compiled one (filters/_fastlid.pyx, built by
    # `make setup` / setup.py) or fastText's binding (not built, or a model it does not
    # support).  getattr: --against runs revisions without it.
    result["compiled"] = bool(getattr(stage._lid, "compiled", False))
    result["texts_per_s_per_core"] = result["all_pages"][f"{top}_texts_per_s"]
    result["texts_per_s_per_core_cpu"] = result["all_pages"][f"{top}_texts_per_s_cpu"]
    return result


def against(ref: str, passes: int, rounds: int) -> dict:
    """This tree and git revision ``ref``, each in its own process, alternating."""
    runs: dict[str, list] = {"current": [], "baseline": []}
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", HERE, "archive", ref, "filters", "pipeline"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        for _ in range(rounds):
            for name, root in (("baseline", tmp), ("current", HERE)):
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", root,
                                      "--passes", str(passes)], check=True, capture_output=True,
                                     text=True).stdout
                runs[name].append(json.loads(out.strip().splitlines()[-1]))
    best = {k: max(v, key=lambda r: r["texts_per_s_per_core"]) for k, v in runs.items()}
    cur, base = best["current"], best["baseline"]
    same = all(cur[s][f"{p}_digest"] == base[s]["single_digest"]
               for s in ("english_pages", "all_pages") for p in ("single", "batched")
               if f"{p}_digest" in cur[s])
    return {**cur, "baseline_ref": ref, "baseline": base, "same_decisions": same,
            "speedup": round(cur["texts_per_s_per_core"] / base["texts_per_s_per_core"], 2),
            "speedup_cpu": round(cur["texts_per_s_per_core_cpu"]
                                 / base["texts_per_s_per_core_cpu"], 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--against", metavar="GIT_REF", help="also time this revision's text step")
    ap.add_argument("--rounds", type=int, default=2, help="alternations with --against")
    ap.add_argument("--root", default=HERE, help=argparse.SUPPRESS)  # code to time (--against)
    args = ap.parse_args()
    # bad arguments stop here with argparse's one-line error, not in a traceback mid-run
    if args.passes < 1:
        ap.error(f"--passes must be at least 1: got {args.passes}")
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1: got {args.rounds}")
    if args.against and subprocess.run(["git", "-C", HERE, "rev-parse", "--verify", "-q",
                                        args.against + "^{commit}"], capture_output=True).returncode:
        ap.error(f"--against: {args.against!r} is not a git revision of {HERE}")
    if not os.path.isdir(PAGES):
        sys.exit(f"no real pages at {os.path.normpath(PAGES)}")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    if args.against:
        result = against(args.against, args.passes, args.rounds)
    else:
        sys.path.insert(0, args.root)
        result = measure(args.passes)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
