"""The training stream: sharded webdatasets -> decoded samples -> collated batches, split
across ranks and DataLoader workers, and the DataLoader that carries a worker's error and its
skip count to the training loop (the sample decoding and collating are in data.py)."""
from __future__ import annotations

import logging
import os
import random

import torch
import webdataset as wds
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from .config import Config, ConfigError
from .data import BadSamples, PretrainCollator, Tokenizer, decode_sample, list_shards

log = logging.getLogger(__name__)


class WorkerFailed:
    """A DataLoader worker's ConfigError, handed to the main process as a batch.  Raised in the
    worker, torch re-raises it there with the worker's traceback folded into the message, and
    `lait` printed all of it as its one-line error; `Loader` raises it again, message intact."""

    def __init__(self, message: str):
        self.message = message


class PretrainStream(IterableDataset):
    """An endless stream of collated batches for one rank; each DataLoader worker reads its own
    share of the shards (or of the samples, when shards are fewer than readers)."""

    def __init__(self, cfg: Config, shards: str, batch_size: int, tok: Tokenizer,
                 rank: int = 0, world: int = 1, seed: int = 0, text_only_shards: str | None = None,
                 collator=PretrainCollator):
        super().__init__()
        self.collator = collator
        self.cfg, self.tok, self.B = cfg, tok, batch_size
        self.shards = list_shards(shards)
        self.text_shards = list_shards(text_only_shards) if text_only_shards else self.shards
        self.rank, self.world, self.seed = rank, world, seed

    def _samples(self, shards: list[str], reader: int, readers: int, rng: random.Random,
                 text_only: bool, bad: BadSamples):
        epoch = 0
        while True:
            order = list(shards)
            random.Random(self.seed * 7919 + epoch).shuffle(order)  # same order on every reader
            split_shards = len(order) >= readers
            mine = order[reader::readers] if split_shards else order
            buf: list[dict] = []
            n = good = 0
            ds = wds.WebDataset(mine, shardshuffle=False, nodesplitter=None, workersplitter=None,
                                handler=bad, empty_check=False)
            for s in ds:
                n += 1
                if not split_shards and (n - 1) % readers != reader:
                    continue
                try:
                    buf.append(decode_sample(s, self.cfg, self.tok, text_only))
                except Exception as e:  # noqa: BLE001 - log, skip, go on
                    bad(e, s.get("__key__", "?"))
                    continue
                good += 1
                if len(buf) >= self.cfg.data.shuffle_buffer:
                    yield buf.pop(rng.randrange(len(buf)))
            if not good:
                # A pass with no usable sample would be followed by another, for ever (the
                # build's shards without `lait features` hung the run after 20 warnings).
                why = f": {bad.last}" if bad.last is not None else ""
                raise ConfigError(f"no usable sample in {len(mine)} shard(s) of {shards[0]!r}"
                                  f"{' ...' if len(shards) > 1 else ''} ({n} read{why}); "
                                  "training reads the shards `lait features` writes")
            rng.shuffle(buf)
            yield from buf
            epoch += 1

    def __iter__(self):
        wi = get_worker_info()
        wid, nw = (wi.id, wi.num_workers) if wi else (0, 1)
        reader, readers = self.rank * nw + wid, self.world * nw
        seed = self.seed * 1000003 + reader
        rng = random.Random(seed)
        bad = BadSamples()
        collate = self.collator(self.cfg, self.tok, seed)
        pairs = self._samples(self.shards, reader, readers, rng, False, bad)
        ratio = self.cfg.pretrain.text_only_ratio if self.collator is PretrainCollator else 0.0
        texts = self._samples(self.text_shards, reader, readers, random.Random(seed + 1), True, bad) if ratio else None
        try:
            while True:
                if texts is not None and rng.random() < ratio:
                    batch = collate([next(texts) for _ in range(self.B)], text_only=True)
                else:
                    batch = collate([next(pairs) for _ in range(self.B)])
                # this reader's skips so far, for metrics.jsonl (see pop_bad_samples)
                batch[BAD_SAMPLES] = torch.tensor([reader, bad.count])
                yield batch
        except ConfigError as e:
            if wi is None:
                raise
            yield WorkerFailed(str(e))


BAD_SAMPLES = "bad_samples"


def pop_bad_samples(batch: dict, tally: dict) -> None:
    """Take a batch's skip count out of it (the model never sees it) into ``tally``: reader
    -> bad samples it skipped so far; their sum is this rank's count."""
    t = batch.pop(BAD_SAMPLES, None)
    if t is not None:
        tally[int(t[0])] = int(t[1])


class Loader(DataLoader):
    """A DataLoader that raises a worker's ConfigError (see `WorkerFailed`) in the main process."""

    def __iter__(self):
        for batch in super().__iter__():
            if isinstance(batch, WorkerFailed):
                raise ConfigError(batch.message)
            yield batch


def loader_workers(requested: int, world: int = 1, cores: int | None = None, warn: bool = True) -> int:
    """``data.num_workers``, capped at the cores this process may use per rank minus one (the
    training loop's own), with a warning: 8 workers on a 2-core machine only fight the model
    for the CPU.  The cap changes which worker reads which shard, hence the sample order."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cap = max(0, cores // max(1, world) - 1)
    if requested > cap:
        if not warn:
            return cap
        log.warning("data.num_workers=%d but %d core(s) per process: using %d DataLoader worker(s) "
                    "(set data.num_workers to choose)", requested, cores // max(1, world), cap)
        return cap
    return requested


def make_loader(cfg: Config, shards: str, batch_size: int, tok: Tokenizer, rank: int = 0,
                world: int = 1, seed: int = 0, pin: bool = False, collator=PretrainCollator) -> DataLoader:
    text_only = cfg.pretrain.text_only_shards if collator is PretrainCollator else None
    ds = PretrainStream(cfg, shards, batch_size, tok, rank, world, seed, text_only, collator)
    nw = loader_workers(cfg.data.num_workers, world)
    return Loader(ds, batch_size=None, num_workers=nw, pin_memory=pin,
                      persistent_workers=nw > 0, prefetch_factor=4 if nw > 0 else None)
