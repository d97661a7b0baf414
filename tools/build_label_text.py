"""Build ``scoring/data/imagenet_label_text.json``: WordNet's words for the 1000 ImageNet classes.

A caption says "a lake at dawn"; the classifier says "lakeside", "boathouse".  MiniLM meets
them better when each class brings its WordNet synonyms, gloss and hypernyms ("lakeside:
the shore of a lake; a kind of shore, geological formation").  ImageNet's classes are WordNet
3.0 noun synsets, and the 1000 classes are in the order of their synset offsets (wnids sorted),
so the readable names of ``model/imagenet_classes.txt`` are matched to synsets by lemma and
the ambiguous ones settled by that order: the chosen offsets must increase with the class
index (a longest increasing choice over every class's candidates).  A class with no match
keeps its name only.

Needs Debian's ``wordnet-base`` (WordNet 3.0 at /usr/share/wordnet) when run; the JSON it
writes is committed, so scoring never needs WordNet installed.

    python -m tools.build_label_text [--wordnet /usr/share/wordnet] [--out PATH]
    python -m tools.build_label_text --vectors   # scoring/models/label_vectors.npz from the JSON

``--vectors`` embeds each class's text (``scoring.label_space.class_text``) with MiniLM, one
text at a time as the scorer does, and stores them as float16 (``allow_pickle=False``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

WORDNET = "/usr/share/wordnet"
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "scoring", "data", "imagenet_label_text.json")
HYPERNYM_LEVELS = 3


def read_nouns(folder: str):
    """({offset: (lemmas, gloss, hypernym offsets)}, {lemma: [offsets]})."""
    synsets = {}
    with open(os.path.join(folder, "data.noun"), encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):  # the licence header
                continue
            head, _, gloss = line.partition(" | ")
            t = head.split()
            off, n = int(t[0]), int(t[3], 16)
            lemmas = [t[4 + 2 * i].replace("_", " ") for i in range(n)]
            at = 4 + 2 * n
            p_cnt = int(t[at])
            ptrs = t[at + 1: at + 1 + 4 * p_cnt]
            hyper = [int(ptrs[4 * i + 1]) for i in range(p_cnt) if ptrs[4 * i] in ("@", "@i")]
            synsets[off] = (lemmas, gloss.strip(), hyper)
    index: dict[str, list[int]] = {}
    with open(os.path.join(folder, "index.noun"), encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue
            t = line.split()
            n_syn = int(t[2])
            index[t[0].replace("_", " ")] = [int(x) for x in t[-n_syn:]]
    return synsets, index


# Readable names that are no WordNet lemma of their synset (checked by hand).
ALIASES = {"mountain": "alp", "beach": "seashore", "rooster": "cock", "jeans": "blue jean",
           "shipwreck": "wreck", "kayak": "kayak", "tent": "tent", "couch": "studio couch"}


def candidates(name: str, index: dict) -> list[int]:
    """Synsets whose lemma is the name, or the name without a disambiguating word
    ("crane bird" -> "crane", "stinkhorn mushroom" -> "stinkhorn")."""
    key = ALIASES.get(name, name).lower()
    tries = [key, key.replace("-", " "), key.replace(" ", "-")]
    words = key.split()
    if len(words) > 1:
        tries += [" ".join(words[:-1]), " ".join(words[1:]), words[-1]]
    out: list[int] = []
    for t in tries:
        for o in index.get(t, []):
            if o not in out:
                out.append(o)
    return out


def increasing_choice(cands: list[list[int]]) -> list[int | None]:
    """One offset per class (or None) so that the chosen offsets increase with the class
    index and as many classes as possible get one."""
    nodes = [(i, o) for i, cs in enumerate(cands) for o in cs]
    best, prev = {}, {}
    for k, (i, o) in enumerate(nodes):
        b, p = 1, None
        for k2 in range(k):
            i2, o2 = nodes[k2]
            if i2 < i and o2 < o and best[k2] + 1 > b:
                b, p = best[k2] + 1, k2
        best[k], prev[k] = b, p
    out: list[int | None] = [None] * len(cands)
    k = max(best, key=lambda x: (best[x], -x)) if best else None
    while k is not None:
        out[nodes[k][0]] = nodes[k][1]
        k = prev[k]
    return out


def fill_gaps(names: list[str], chosen: list, synsets: dict) -> list:
    """A class left without a match ("rooster", "beach", "kayak") takes the synset between
    its matched neighbours' offsets whose lemmas or gloss share most words with its name."""
    out = list(chosen)
    offsets = sorted(synsets)
    for i, off in enumerate(chosen):
        if off is not None:
            continue
        lo = next((o for o in reversed(out[:i]) if o is not None), -1)
        hi = next((o for o in out[i + 1:] if o is not None), 10 ** 9)
        words = {w for w in re.findall(r"[a-z]+", names[i].lower()) if len(w) > 2}
        best, score = None, 0
        for o in offsets:
            if lo < o < hi:
                lemma_words = {w for lm in synsets[o][0] for w in re.findall(r"[a-z]+", lm.lower())}
                gloss_words = set(re.findall(r"[a-z]+", synsets[o][1].lower()))
                sc = 2 * len(words & lemma_words) + len(words & gloss_words)
                if sc > score:
                    best, score = o, sc
        out[i] = best
    return out


def hypernym_names(off: int, synsets: dict, levels: int = HYPERNYM_LEVELS) -> list[str]:
    out, frontier = [], [off]
    for _ in range(levels):
        frontier = [h for o in frontier for h in synsets[o][2]][:2]
        for h in frontier:
            name = synsets[h][0][0]
            if name not in out:
                out.append(name)
    return out


def build(folder: str = WORDNET) -> list[dict]:
    from filters.imagenet import imagenet_classes

    synsets, index = read_nouns(folder)
    names = imagenet_classes()
    chosen = fill_gaps(names, increasing_choice([candidates(n, index) for n in names]), synsets)
    rows = []
    for name, off in zip(names, chosen):
        if off is None:
            rows.append({"name": name, "wnid": None, "lemmas": [], "gloss": "", "hypernyms": []})
            continue
        lemmas, gloss, _ = synsets[off]
        rows.append({"name": name, "wnid": f"n{off:08d}", "lemmas": lemmas,
                     "gloss": gloss.split(";")[0].strip().strip('"').strip(),
                     "hypernyms": hypernym_names(off, synsets)})
    return rows


def build_vectors(text_path: str, out: str) -> int:
    import numpy as np

    from scoring.label_space import class_text
    from scoring.minilm import MiniLM

    with open(text_path, encoding="utf-8") as f:
        rows = json.load(f)
    enc = MiniLM()
    vecs = np.array([enc.encode([class_text(r)])[0] for r in rows], np.float32)
    with open(out, "wb") as f:  # a file object: np.savez would otherwise add ".npz"
        np.savez_compressed(f, vectors=vecs.astype(np.float16))
    return len(vecs)


def main(argv=None) -> int:
    from scoring.label_space import LABEL_VECTORS

    ap = argparse.ArgumentParser(prog="python -m tools.build_label_text", description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet", default=WORDNET)
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--vectors", action="store_true", help="embed the JSON's class texts instead")
    ap.add_argument("--vectors-out", default=LABEL_VECTORS)
    a = ap.parse_args(argv)
    if a.vectors:
        n = build_vectors(a.out, a.vectors_out)
        print(json.dumps({"vectors": n, "out": a.vectors_out}))
        return 0
    if not os.path.isfile(os.path.join(a.wordnet, "data.noun")):
        print(f"no WordNet at {a.wordnet} (apt-get install wordnet-base)", file=sys.stderr)
        return 2
    rows = build(a.wordnet)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=0, ensure_ascii=False)
        f.write("\n")
    print(json.dumps({"classes": len(rows), "matched": sum(r["wnid"] is not None for r in rows), "out": a.out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
