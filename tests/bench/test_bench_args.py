"""The bench scripts refuse bad arguments at once, with argparse's usage and one error line, exit 2,
before any work: they had run on and died in a traceback (a division by zero, a KeyError, a
failed `git archive`) or silently timed nothing."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BAD = [
    ("dedup.py", ["--sizes", "abc"], "--sizes"),
    ("dedup.py", ["--sizes", "0"], "--sizes"),
    ("dedup.py", ["--sizes", "100", "--repeats", "0"], "--repeats"),
    ("dedup.py", ["--sizes", "100", "--distance", "65"], "--distance"),
    ("images.py", ["--passes", "0"], "--passes"),
    ("images.py", ["--only", "no_such_variant"], "no_such_variant"),
    ("images.py", ["--quick", "--only", "nsfw_first"], "--quick"),
    ("text.py", ["--passes", "0"], "--passes"),
    ("text.py", ["--against", "HEAD", "--rounds", "0"], "--rounds"),
    ("text.py", ["--against", "no-such-ref-qa7", "--passes", "2"], "no-such-ref-qa7"),
    ("extract.py", ["--reps", "0"], "--reps"),
    ("text_worst.py", ["--reps", "0"], "--reps"),
    ("text_worst.py", ["--lengths", "abc"], "--lengths"),
    ("text_worst.py", ["--lengths", "0"], "--lengths"),
    ("text_worst.py", ["--limit", "0"], "--limit"),
    ("text_worst.py", ["--against", "no-such-ref-qa18"], "no-such-ref-qa18"),
    ("extract_worst.py", ["--reps", "0"], "--reps"),
    ("extract_worst.py", ["--sizes", "abc"], "--sizes"),
    ("extract_worst.py", ["--sizes", "0"], "--sizes"),
    ("extract_worst.py", ["--against", "no-such-ref-qa18"], "no-such-ref-qa18"),
    ("extract.py", ["--copies", "0"], "--copies"),
    ("fetch.py", ["--n", "0"], "--n"),
    ("fetch.py", ["--threads", "0"], "--threads"),
    ("itm_stall.py", ["{tmp}/o.jsonl", "--every", "0"], "--every"),
    ("itm_stall.py", ["{tmp}/o.jsonl", "--steps", "0"], "--steps"),
    ("itm_stall.py", ["{tmp}/o.jsonl", "--config", "{tmp}/nope.yaml"], "nope.yaml"),
    ("itm_stall.py", ["{tmp}/o.jsonl", "--stage", "3", "--set", "data.vocab=None"], "stage 3"),
    ("seen_unseen.py", ["--config", "{tmp}/nope.yaml", "--test", "{tmp}", "{tmp}"], "nope.yaml"),
    ("seen_unseen.py", ["--config", "configs/imagebert_synth.yaml", "--test", "{tmp}/none",
                        "{tmp}"], "none"),
    ("stage1_noise.py", ["{tmp}/none", "{tmp}/out", "--keep", "0.5"], "none"),
    ("stage1_noise.py", ["{tmp}", "{tmp}", "--keep", "0.5"], "no .tar shards"),
    ("train_memory.py", ["--work", "{tmp}", "--steps", "0"], "--steps"),
    ("train_memory.py", ["--work", "{tmp}", "--only", "h128x2 b4,no_such_config"], "no_such_config"),
    ("train_memory.py", ["--work", "{tmp}", "--fit", "{tmp}/none.txt"], "none.txt"),
    ("train_memory.py", ["--work", "{tmp}", "--loader", "--loader-batches", "0"], "--loader-batches"),
    ("train_memory.py", ["--work", "{tmp}", "--loader", "--baseline", "{tmp}/none"], "none"),
    ("pixel_step.py", ["--pairs", "0"], "--pairs"),
    ("pixel_step.py", ["--batch", "1"], "--batch"),
    ("pixel_step.py", ["--size", "16"], "--size"),
    ("pixel_step.py", ["--against", "{tmp}/none"], "none"),
    ("pixel_step.py", ["--set", "model.no_such_key=1"], "no_such_key"),
]


@pytest.mark.parametrize("script,args,named", BAD, ids=[f"{s} {' '.join(a)}" for s, a, _ in BAD])
def test_a_bad_argument_is_one_line_and_exit_2(script, args, named, tmp_path):
    # --cache keeps fetch.py's default /tmp cache untouched should the check ever be missed
    extra = ["--cache", str(tmp_path)] if script == "fetch.py" else []
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    named = named.replace("{tmp}", str(tmp_path))
    res = subprocess.run([sys.executable, os.path.join(REPO, "bench", script), *args, *extra],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert "error:" in last and named in last, res.stderr
    assert res.stdout == ""  # nothing measured, nothing printed


def test_text_bench_times_the_compiled_predictor_beside_fasttexts_binding():
    # the README's ratio between the two predictors comes from this run; no speed is asserted
    pages = os.path.join(REPO, "..", "shared", "data", "real_pages")
    if not os.path.isdir(pages):
        pytest.skip("../shared/data/real_pages is absent")
    res = subprocess.run([sys.executable, os.path.join(REPO, "bench", "text.py"), "--passes", "1"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    last = json.loads(res.stdout.strip().splitlines()[-1])
    for part in ("english_pages", "all_pages"):
        if last["compiled"]:
            assert last[part]["fasttext_compiled_ratio_cpu"] > 0
            assert last[part]["fasttext_binding_texts_per_s_cpu"] > 0
        else:  # not built: nothing compiled to compare
            assert "fasttext_compiled_ratio_cpu" not in last[part]


def test_images_bench_prints_cpu_flags_and_each_variants_ratio_to_the_headline():
    res = subprocess.run([sys.executable, os.path.join(REPO, "bench", "images.py"), "--passes", "1",
                          "--only", "nsfw_first"], cwd=REPO, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = res.stdout.strip().splitlines()
    assert lines[0].startswith("cpu ")  # the CPU's int8 flags come first, as documented
    last = json.loads(lines[-1])
    assert set(last["cpu"]) >= {"avx2", "avx512_vnni", "avx_vnni"}
    assert set(last["ratio_to_default"]) == {"default", "nsfw_first"} == set(last["variants"])
    assert last["ratio_to_default"]["default"] == 1.0
    v = last["variants"]
    assert last["ratio_to_default"]["nsfw_first"] == round(v["nsfw_first"] / v["default"], 3)


def test_stage1_noise_refuses_to_rewrite_its_shards_in_place(tmp_path):
    # dst == src had truncated every shard before reading it
    shard = tmp_path / "00000.tar"
    shard.write_bytes(b"not read")
    res = subprocess.run([sys.executable, os.path.join(REPO, "bench", "stage1_noise.py"),
                          str(tmp_path), str(tmp_path) + "/.", "--keep", "0.5"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "dst must differ from src" in res.stderr
    assert shard.read_bytes() == b"not read"
