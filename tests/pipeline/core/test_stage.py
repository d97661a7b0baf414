"""The stage contract: events, reasons, exception safety, and the in = kept + dropped rule."""
import pytest

from pipeline.core.plan import Plan, Step
from pipeline.core.stage import BatchMapStage, Drop, GroupStage, Keep, MapStage, Source, snake
from pipeline.engines.local import run_local
from pipeline.core.stats import StepStats, merge_all


class Numbers(Source):
    name = "read"

    def __init__(self, parts):
        self._parts = parts

    def parts(self):
        return sorted(self._parts)

    def read(self, part):
        for x in part.split(","):
            if x == "bad":
                yield self.drop("bad_number")
            elif x == "boom":
                raise IOError("disk on fire")
            else:
                yield Keep((int(x),))


class Halve(MapStage):
    name = "halve"

    def process(self, x):
        if x == 7:
            raise ZeroDivisionError
        if x % 2:
            return self.drop("odd")
        return [x // 2, x // 2]


class Parity(GroupStage):
    name = "parity"

    def key(self, x):
        return str(x % 3)

    def reduce(self, key, xs):
        best = max(xs)
        return [Keep((x,)) if x == best else self.drop("not_max") for x in xs]


def test_events_count_every_record_and_reason():
    plan = Plan([Step("source", Numbers(["1,2,bad,4", "7,8,boom"])), Step("map", Halve()),
                 Step("group", Parity())], parts=["1,2,bad,4", "7,8,boom"])
    steps = {s.name: s for s in run_local(plan).steps}
    read = steps["read"]
    assert (read.n_in, read.kept, read.out) == (7, 5, 5)
    assert read.dropped == {"read_bad_number": 1, "read_error_os_error": 1}
    halve = steps["halve"]
    assert (halve.n_in, halve.kept, halve.out) == (5, 3, 6)
    assert halve.dropped == {"halve_odd": 1, "halve_error_zero_division_error": 1}
    par = steps["parity"]
    assert par.n_in == 6 and par.kept + sum(par.dropped.values()) == 6
    assert all(s.balanced() for s in steps.values())


def test_reasons_must_be_snake_case():
    with pytest.raises(ValueError):
        Halve().drop("Not Snake")
    assert snake("ConnectionResetError") == "connection_reset_error"


def test_reduce_must_give_one_event_per_record():
    class Broken(GroupStage):
        name = "broken"

        def key(self, x):
            return "k"

        def reduce(self, key, xs):
            return [Keep(())]

    with pytest.raises(RuntimeError, match="1 events for 2 records"):
        Broken().events("k", [1, 2])


def test_stats_merge_by_addition_and_cap_reasons():
    a, b = StepStats("s"), StepStats("s")
    for i in range(100):
        a.add_event(Drop(f"s_r{i}"))
    b.add_event(Keep((1, 2)))
    total = merge_all(["s", "t"], [a, b])
    assert total[0].n_in == 101 and total[0].out == 2 and total[1].n_in == 0
    capped = total[0].to_dict()["dropped"]
    assert len(capped) == 64 and sum(capped.values()) == 100 and "s_other" in capped


class Batched(BatchMapStage):
    name = "batched"
    batch_size = 4
    calls: list = []

    def process_batch(self, xs):
        Batched.calls.append(len(xs))
        if 13 in xs:
            raise ValueError("one bad record spoils the batch")
        return [self.drop("odd") if x % 2 else [x] for x in xs]


def test_batch_stage_gets_batches_and_isolates_a_bad_record():
    from pipeline.core.executor import run_map_partition

    Batched.calls = []
    items = [("r", x) for x in range(10)] + [("s", "passes through")] + [("r", 13), ("r", 14)]
    out = list(run_map_partition(Step("map", Batched()), items))
    assert Batched.calls[:3] == [4, 4, 4]  # 0-3, 4-7, then 8, 9, 13, 14 (fails) -> one by one
    kept = [v for k, v in out if k == "r"]
    assert kept == [0, 2, 4, 6, 8, 14]
    (stats,) = [v for k, v in out if k == "s" and v != "passes through"]
    assert stats.n_in == 12 and stats.dropped == {"batched_odd": 5, "batched_error_value_error": 1}
