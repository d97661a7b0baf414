"""GPU training throughput of the ImageBERT trainer vs Hugging Face VisualBERT, same batches.

    python bench/train_gpu.py                    # on a CUDA machine (H100 / H200)
    python bench/train_gpu.py --smoke            # tiny sizes on CPU: checks the code paths only

Model: BERT-base sized (12 x 768, 12 heads, FFN 3072), sequences of 44 text tokens + 100 regions
(144), bf16 autocast, fused AdamW. Each "sample" is one 144-token sequence through forward,
backward and the optimiser step (ITM negatives included: a batch of B pairs is 3B sequences).
The reference is transformers' VisualBertForPreTraining of the same size, fed the same token
ids, region features and labels (BertForPreTraining on the 144-token text-only sequence if
VisualBERT is missing). The data loader is timed alone on shards written here.

MFU = model FLOPs/s (matmuls, 3x forward, see model.pretrain.model_flops_per_sample) divided
by the GPU's dense bf16 peak. The last line printed is a JSON object with samples_per_s,
reference_samples_per_s, ratio, mfu (and more). Without a GPU (and without --smoke) it says so
and exits 0.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from model.config import from_dict  # noqa: E402
from model.data import PretrainCollator, tokenizer_for  # noqa: E402
from model.stream import make_loader  # noqa: E402
from model.pretrain import ImageBERT, model_flops_per_sample  # noqa: E402
from model.train import build_optimizers  # noqa: E402

PEAK_BF16 = {"H200": 989e12, "H100 PCIe": 756e12, "H100": 989e12, "A100": 312e12, "L4": 121e12}
WORDS = ("a red car parked on the street next to an old stone building with tall windows and a "
         "small dog sitting in the shade of a tree while people walk past on a sunny afternoon").split()


def peak_flops(name: str) -> float | None:
    for k, v in PEAK_BF16.items():
        if k in name:
            return v
    return None


def write_shards(out: str, n: int, regions: int, dim: int, per_shard: int = 500, seed: int = 0):
    import webdataset as wds
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    for sh in range((n + per_shard - 1) // per_shard):
        with wds.TarWriter(os.path.join(out, f"{sh:05d}.tar")) as w:
            for i in range(sh * per_shard, min(n, (sh + 1) * per_shard)):
                z = io.BytesIO()
                xy = rng.uniform(0, 0.7, (regions, 2))
                b = np.concatenate([xy, xy + 0.3, np.full((regions, 1), 0.09)], 1)
                np.savez(z, features=rng.random((regions, dim), dtype=np.float32).astype(np.float16),
                         boxes=b.astype(np.float32), labels=rng.integers(0, 1000, regions),
                         scores=rng.random(regions).astype(np.float32))
                cap = " ".join(rng.choice(WORDS, int(rng.integers(8, 60))))
                w.write({"__key__": f"{i:08d}", "txt": cap.encode(), "regions.npz": z.getvalue()})


def fixed_batch(cfg, tok, samples, pairs, text_len):
    """One collated batch with every sequence padded to the full length (text_len + regions)."""
    b = PretrainCollator(cfg, tok, seed=0)(samples[:pairs])
    pad = text_len - b["input_ids"].shape[1]
    if pad > 0:
        for k, v in (("input_ids", 0), ("text_mask", False), ("mlm_labels", -100)):
            b[k] = torch.nn.functional.pad(b[k], (0, pad), value=v)
    return b


def time_steps(step, n_warm, n_meas, sync):
    for _ in range(n_warm):
        step()
    sync()
    t = time.perf_counter()
    for _ in range(n_meas):
        step()
    sync()
    return (time.perf_counter() - t) / n_meas


def time_ours(cfg, batch, dev, args, sync, amp) -> float:
    """Seconds per training step of our model (forward, backward, fused AdamW)."""
    torch.manual_seed(0)
    model = ImageBERT(cfg).to(dev).train()
    opt = build_optimizers(model, cfg.stage(1))[0][0]
    fwd = torch.compile(model) if args.compile and dev.type == "cuda" else model

    def ours():
        with amp():
            loss = fwd(batch)["loss"]
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return time_steps(ours, args.warmup, args.steps, sync)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=64, help="image-text pairs per step (x3 sequences)")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--compile", action="store_true", help="torch.compile our model")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes on CPU (checks code paths)")
    ap.add_argument("--peak-tflops", type=float, default=None)
    args = ap.parse_args()

    cuda = torch.cuda.is_available()
    if not cuda and not args.smoke:
        print("no CUDA GPU on this machine: nothing to measure (use --smoke for a CPU code-path check)")
        print(json.dumps({"gpu": None, "samples_per_s": None, "reference_samples_per_s": None,
                          "ratio": None, "mfu": None}))
        return 0
    dev = torch.device("cuda" if cuda else "cpu")
    if args.smoke:
        size = dict(hidden=64, layers=2, heads=2, intermediate=256)
        args.pairs, args.steps, args.warmup, args.workers = min(args.pairs, 4), 2, 1, 0
        n_regions, text_len, dim = 10, 14, 64
    else:
        size = dict(hidden=768, layers=12, heads=12, intermediate=3072)
        n_regions, text_len, dim = 100, 44, 1280
    cfg = from_dict({"model": {**size, "dropout": 0.1, "region_dim": dim, "init_from": None},
                     "data": {"max_len": n_regions + text_len, "max_regions": n_regions,
                              "num_workers": args.workers, "shuffle_buffer": 256},
                     "stages": {1: {"shards": "x", "batch_size": args.pairs, "lr": 1e-4}},
                     "precision": "bf16", "compile": args.compile})
    tok = tokenizer_for(cfg)
    torch.backends.cuda.matmul.allow_tf32 = True
    res: dict = {"gpu": torch.cuda.get_device_name() if cuda else "cpu (smoke)",
                 "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
                 "pairs_per_step": args.pairs, "seq_len": n_regions + text_len}

    with tempfile.TemporaryDirectory() as tmp:
        n_samples = max(40 * args.pairs, 200)
        write_shards(tmp, n_samples, n_regions, dim)
        # --- the loader alone ---
        loader = iter(make_loader(cfg, tmp, args.pairs, tok, seed=1, pin=cuda))
        next(loader)
        t = time.perf_counter()
        nb = max(args.steps, 5)
        for _ in range(nb):
            next(loader)
        res["loader_batches_per_s"] = nb / (time.perf_counter() - t)
        res["loader_samples_per_s"] = res["loader_batches_per_s"] * args.pairs * 3
        del loader
        from model.data import read_samples
        samples = read_samples(tmp, cfg, tok, limit=args.pairs)

    batch = {k: v.to(dev) for k, v in fixed_batch(cfg, tok, samples, args.pairs, text_len).items()}
    N = batch["input_ids"].shape[0]
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    amp = lambda: torch.autocast(dev.type, dtype=torch.bfloat16)  # noqa: E731

    # --- ours ---
    dt = time_ours(cfg, batch, dev, args, sync, amp)
    res["samples_per_s"] = N / dt
    res["step_ms"] = dt * 1e3
    masked = float((batch["mlm_labels"] != -100).sum()) / N
    flops = model_flops_per_sample(cfg.model, n_regions + text_len, masked)
    res["model_tflops_per_sample"] = flops / 1e12
    peak = args.peak_tflops * 1e12 if args.peak_tflops else (peak_flops(res["gpu"]) if cuda else None)
    res["mfu"] = res["samples_per_s"] * flops / peak if peak else None
    res["peak_tflops"] = peak / 1e12 if peak else None
    if cuda:
        torch.cuda.empty_cache()

    # --- the reference, same batches ---
    import transformers as tf
    labels = torch.cat([batch["mlm_labels"], torch.full((N, n_regions), -100, device=dev)], 1)
    try:
        rcfg = tf.VisualBertConfig(vocab_size=cfg.model.vocab_size, hidden_size=cfg.model.hidden,
                                   num_hidden_layers=cfg.model.layers, num_attention_heads=cfg.model.heads,
                                   intermediate_size=cfg.model.intermediate, visual_embedding_dim=dim)
        ref = tf.VisualBertForPreTraining(rcfg).to(dev).train()
        res["reference"] = "transformers.VisualBertForPreTraining"
        inputs = dict(input_ids=batch["input_ids"], attention_mask=batch["text_mask"].long(),
                      token_type_ids=torch.zeros_like(batch["input_ids"]),
                      visual_embeds=batch["feats"], visual_attention_mask=batch["vis_mask"].long(),
                      visual_token_type_ids=torch.ones_like(batch["vis_mask"], dtype=torch.long),
                      labels=labels, sentence_image_labels=batch["itm_labels"].long())
    except (AttributeError, ImportError):
        bcfg = tf.BertConfig(vocab_size=cfg.model.vocab_size, hidden_size=cfg.model.hidden,
                             num_hidden_layers=cfg.model.layers, num_attention_heads=cfg.model.heads,
                             intermediate_size=cfg.model.intermediate)
        ref = tf.BertForPreTraining(bcfg).to(dev).train()
        res["reference"] = "transformers.BertForPreTraining (same sequence length)"
        ids = torch.randint(1000, cfg.model.vocab_size, (N, n_regions + text_len), device=dev)
        inputs = dict(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels,
                      next_sentence_label=batch["itm_labels"].long())
    ropt = torch.optim.AdamW(ref.parameters(), lr=1e-4, fused=cuda)

    def reference():
        with amp():
            loss = ref(**inputs).loss
        loss.backward()
        ropt.step()
        ropt.zero_grad(set_to_none=True)

    rdt = time_steps(reference, args.warmup, args.steps, sync)
    res["reference_samples_per_s"] = N / rdt
    res["ratio"] = res["samples_per_s"] / res["reference_samples_per_s"]
    res["loader_outruns_model"] = res["loader_samples_per_s"] > res["samples_per_s"]
    print(f"ours {res['samples_per_s']:.1f} samples/s, reference {res['reference_samples_per_s']:.1f}, "
          f"ratio {res['ratio']:.2f}, MFU {res['mfu'] if res['mfu'] is None else round(res['mfu'], 3)}, "
          f"loader {res['loader_samples_per_s']:.1f} samples/s")
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
