"""Checkpoints and the files of a stage run: safetensors + JSON checkpoints written so that a
kill never leaves a half one (and recovered when a kill fell between two renames), the
stage lock that keeps a second run of a stage out, and metrics.jsonl cut back to the step a
resumed run starts from.  Used by `train.py` and `retrieval.py`."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil

import torch
from safetensors.torch import load_file, save_file

from pipeline.core.locks import folder_lock

from .config import ConfigError

log = logging.getLogger(__name__)


def save_checkpoint(path: str, model: torch.nn.Module, opts=(), state: dict | None = None) -> None:
    """model.safetensors + optim.safetensors + state.json, written to a temp folder and renamed,
    so a killed run never leaves a half checkpoint that looks whole."""
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    sd = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_file(sd, os.path.join(tmp, "model.safetensors"))
    tensors, meta = {}, []
    for oi, (opt, _) in enumerate(opts):
        osd = opt.state_dict()
        st = {}
        for pi, entry in osd["state"].items():
            st[str(pi)] = {}
            for k, v in entry.items():
                if torch.is_tensor(v):
                    tensors[f"{oi}.{pi}.{k}"] = v.detach().contiguous().cpu()
                else:
                    st[str(pi)][k] = v
        meta.append({"param_groups": osd["param_groups"], "scalars": st})
    if tensors:
        save_file(tensors, os.path.join(tmp, "optim.safetensors"))
    with open(os.path.join(tmp, "state.json"), "w") as f:
        json.dump({**(state or {}), "optimizers": meta}, f, indent=1, default=str)
    if os.path.exists(path):
        old = path + ".old"
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, path)


def recover_checkpoint(path: str) -> None:
    """Put back ``path.old`` when ``path`` is missing: save_checkpoint moves the previous
    checkpoint there before renaming the new one in, and a kill between the two renames left
    no ``path``; the rerun then started the stage again from step 0.  (Every rank may try:
    the first rename wins.)"""
    old = path + ".old"
    if os.path.exists(os.path.join(path, "model.safetensors")) or \
            not os.path.exists(os.path.join(old, "model.safetensors")):
        return
    with contextlib.suppress(FileNotFoundError):
        os.replace(old, path)
        log.warning("%s was missing (a run stopped while saving it): resuming from %s", path, old)


def _model_diff(state: dict, model: torch.nn.Module, err: Exception) -> str:
    """The model keys on which a checkpoint's config (its state.json) and this run's differ;
    torch's first complaint where the checkpoint records no config."""
    saved = (state.get("config") or {}).get("model") or {}
    mine = dataclasses.asdict(model.mcfg) if hasattr(model, "mcfg") else {}
    diff = [f"model.{k}: {saved[k]!r} there, {v!r} here" for k, v in mine.items()
            if k in saved and saved[k] != v]
    if diff:
        return "; ".join(diff)
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    return lines[1] if len(lines) > 1 else (lines[0] if lines else repr(err))


def load_checkpoint(path: str, model: torch.nn.Module, opts=(), strict: bool = True) -> dict:
    """Load weights (and optimiser states when given); returns the JSON state."""
    if not os.path.exists(os.path.join(path, "model.safetensors")):
        raise FileNotFoundError(f"no checkpoint at {path}")
    dev = next(model.parameters()).device
    with open(os.path.join(path, "state.json")) as f:
        state = json.load(f)
    try:
        model.load_state_dict(load_file(os.path.join(path, "model.safetensors"), device=str(dev)), strict=strict)
    except RuntimeError as e:  # torch's page of "size mismatch for ..." lines
        raise ConfigError(f"{path} holds another model than this config's: {_model_diff(state, model, e)}") from None
    if opts:
        load_optimizers(path, opts, state)
    return state


def load_optimizers(path: str, opts, state: dict, keep_hyper: bool = False) -> None:
    """Load the optimisers' states saved by save_checkpoint at `path` (state = its state.json).
    keep_hyper: keep each param group's own hyper-parameters (weight decay, betas, ...) and take
    only the per-parameter state (AdamW's moments and step counts) from the checkpoint."""
    tensors = load_file(os.path.join(path, "optim.safetensors")) if os.path.exists(
        os.path.join(path, "optim.safetensors")) else {}
    saved = state.get("optimizers", [])
    if len(saved) != len(opts):
        raise ConfigError(f"{path} holds {len(saved)} optimiser state(s), this run has {len(opts)}")
    for oi, (opt, _) in enumerate(opts):
        meta = saved[oi]
        st: dict = {}
        for k, v in tensors.items():
            o, pi, name = k.split(".", 2)
            if int(o) == oi:
                st.setdefault(int(pi), {})[name] = v
        for pi, sc in meta["scalars"].items():
            st.setdefault(int(pi), {}).update(sc)
        groups = meta["param_groups"]
        if keep_hyper:
            if [len(g["params"]) for g in groups] != [len(g["params"]) for g in opt.param_groups]:
                raise ConfigError(f"{path}: optimiser {oi} has other parameter groups than this run's")
            groups = [{**{k: v for k, v in mine.items() if k != "params"}, "params": g["params"]}
                      for mine, g in zip(opt.param_groups, groups)]
        opt.load_state_dict({"state": st, "param_groups": groups})


def trim_metrics(path: str, start: int) -> None:
    """Keep the records of steps up to ``start``, where the run resumes: a run killed after
    its last checkpoint had logged steps that the rerun logs again (two losses for one step),
    and a kill while writing can leave half a line that the next record would be glued to."""
    if not os.path.exists(path):
        return
    keep = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("step", 0) <= start:
                keep.append(line if line.endswith("\n") else line + "\n")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.writelines(keep)
    os.replace(path + ".tmp", path)


def stage_lock(sdir: str):
    """Hold ``sdir/.lock`` while a stage trains: a second run of the stage fails at once,
    naming the holder's pid, instead of writing the same checkpoints beside the first (kill -9
    of torchrun leaves its workers running)."""
    return folder_lock(sdir, f"train: {sdir} is being trained by another process (pid {{pid}}); "
                       "stop it first (after kill -9 of torchrun its workers go on: kill them "
                       "too), then run the same command again to resume")
