"""Worst-case time per text of the ``text`` step on hostile input (docs/captions.md,
"Worst-case cost of hostile input").

Usage: ``python bench/text_worst.py [--lengths 250,1000,2000,8000] [--reps 3] [--family SUB]
[--against GIT_REF] [--json PATH]``.  One core, one thread per native library.

Every adversarial family of :mod:`filters.text_adversarial` (texts built against the rules'
regexes, and a generic generator of repeated tokens) is made at each length and timed two
ways, best of ``--reps``:

* ``clean``: the real ``TextCleaner.clean`` (no result cache), what a run pays per text: the
  worse of the text as a picture's own and as a surrounding sentence (the rules asked of
  surrounding texts only, testimonials and the first person; a tree without that path, an
  older ``--against`` revision, is timed the first way only);
* ``rule``: every rule before ``lang`` called directly on the normalised text, the gate
  ignored (an upper bound: the gate may skip a rule), the slowest rule named.

Printed: per family, the worst ``clean`` and ``rule`` time over the lengths (ms), the rule
and the length, and the typical text's time (the real pages' alt texts) for scale.  With
``--against REF`` the same families run on git revision REF's ``filters/`` in a subprocess
(alternating, this tree first), and each family's worst times are printed side by side with
their ratio (REF / this tree).  The LAST line printed is a JSON object.
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

from _compare import HERE, check_ref, one_core, positive_ints, run_at  # noqa: E402


def families() -> dict:
    """The families of THIS tree's tests/filters/adversarial_texts.py, loaded by path (the
    other tree of ``--against`` may not have them)."""
    import importlib.util

    path = os.path.join(HERE, "tests", "filters", "adversarial_texts.py")
    spec = importlib.util.spec_from_file_location("adversarial_texts", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.FAMILIES


def measure(lengths, reps: int, only: str = "", limit: float = 10.0) -> dict:
    """``{family: {"clean_ms", "clean_len", "rule_ms", "rule", "rule_len"}}`` plus
    ``"_typical"``: this process's tree (cwd first on sys.path)."""
    from filters.text import TextCleaner, TextCleanerConfig, _Ctx
    FAMILIES = families()
    from filters.text_rules import RULES

    cleaner = TextCleaner(TextCleanerConfig(cache_size=0))
    cleaner.setup()
    lang_at = [r.name for r in RULES].index("lang")
    cap = cleaner.config.max_input_chars
    spoken = "surrounding" in inspect.signature(cleaner.clean).parameters

    def on_alarm(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, on_alarm)

    def best(fn, *args):
        """Best of ``reps`` seconds; ``limit`` (a lower bound) for a call stopped there (a
        hang: the slug and shortcode patterns before the fix)."""
        t_best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                fn(*args)
            except TimeoutError:
                return limit
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            t_best = min(t_best, time.perf_counter() - t0)
        return t_best

    out = {}
    for fam, make in sorted(FAMILIES.items()):
        if only and only not in fam:
            continue
        row = {"clean_ms": 0.0, "clean_len": 0, "rule_ms": 0.0, "rule": "", "rule_len": 0}
        for n in lengths:
            text = make(n)
            best(cleaner.clean, text, "en")  # wordfreq's words of this text looked up once
            t = best(cleaner.clean, text, "en")
            if spoken:
                t = max(t, best(lambda: cleaner.clean(text, "en", surrounding=True)))
            if t * 1e3 > row["clean_ms"]:
                row.update(clean_ms=t * 1e3, clean_len=n)
            norm = " ".join(text[:cap].split())
            for rule in RULES[:lang_at]:
                def call(rule=rule):
                    rule.fn(norm, _Ctx(cleaner, "en", norm, len(norm.split())))
                t = best(call)
                if t * 1e3 > row["rule_ms"]:
                    row.update(rule_ms=t * 1e3, rule=rule.name, rule_len=n)
        out[fam] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}
    typical = ["A plate of lemon tart with fresh berries on a wooden table",
               "Spencer Platt/Getty Images", "Photo of the new bridge at dusk, 2019",
               "IMG_2041.JPG", "Buy now: 20% off all shoes!"]
    ts = [best(cleaner.clean, t, "en") for t in typical]
    out["_typical"] = {"clean_ms": round(1e3 * sum(ts) / len(ts), 4)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", default="250,1000,2000,8000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--family", default="", help="only families whose name holds this")
    ap.add_argument("--against", default="", help="a git revision to compare with")
    ap.add_argument("--json", default="", help="also write the result here")
    ap.add_argument("--limit", type=float, default=10.0,
                    help="seconds after which one call is stopped and counted as this (a hang)")
    ap.add_argument("--_child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reps < 1:
        ap.error("--reps must be >= 1")
    lengths = positive_ints(ap, "--lengths", args.lengths)
    if args.limit <= 0:
        ap.error("--limit must be > 0")
    check_ref(ap, args.against)
    one_core()
    if args._child:  # the other tree's run: its filters/ first on sys.path, families from ours
        sys.path.insert(0, args._child)
        res = measure(lengths, args.reps, args.family, args.limit)
        print(json.dumps(res))
        return
    sys.path.insert(0, HERE)
    here = measure(lengths, args.reps, args.family, args.limit)
    result = {"lengths": lengths, "reps": args.reps, "tree": here}
    if args.against:
        other = run_at(args.against, __file__,
                       ["--lengths", args.lengths, "--reps", str(args.reps), "--family",
                        args.family, "--limit", str(args.limit)], link_ignored=True)
        result["against"] = {"ref": args.against, "tree": other}
    width = max(len(f) for f in here)
    print(f"{'family':<{width}}  clean ms (len)   worst rule ms (rule, len)"
          + ("   | REF clean ms  REF rule ms (rule)  ratio clean  ratio rule" if args.against
             else ""))
    for fam, row in here.items():
        if fam == "_typical":
            continue
        line = (f"{fam:<{width}}  {row['clean_ms']:8.3f} ({row['clean_len']:>4})"
                f"   {row['rule_ms']:8.3f} ({row['rule']}, {row['rule_len']})")
        if args.against and fam in other:
            o = other[fam]
            line += (f"   | {o['clean_ms']:10.3f}  {o['rule_ms']:10.3f} ({o['rule']})"
                     f"  {o['clean_ms'] / max(row['clean_ms'], 1e-6):10.1f}x"
                     f"  {o['rule_ms'] / max(row['rule_ms'], 1e-6):9.1f}x")
        print(line)
    print(f"typical text: {here['_typical']['clean_ms']:.4f} ms")
    worst = max((r["clean_ms"], f) for f, r in here.items() if f != "_typical")
    worst_rule = max((r["rule_ms"], f, r["rule"]) for f, r in here.items() if f != "_typical")
    result["worst_clean"] = {"ms": worst[0], "family": worst[1]}
    result["worst_rule"] = {"ms": worst_rule[0], "family": worst_rule[1], "rule": worst_rule[2]}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k not in ("tree", "against")}))


if __name__ == "__main__":
    main()
