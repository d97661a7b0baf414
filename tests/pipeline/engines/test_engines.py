"""The same plan on the local executor, Beam (FnApiRunner) and Spark gives the same counts."""
from pipeline.engines import beam as beam_engine
from pipeline.engines import spark as spark_engine
from pipeline.engines.local import run_local
from pipeline.core.plan import Plan, Step
from tests.pipeline.core.test_stage import Halve, Numbers, Parity


class HalveAgain(Halve):
    name = "halve_again"

PARTS = ["1,2,bad,4", "7,8,boom", "10,12,14,16,18,20,22", "3,5,bad,bad"]


def toy_plan(tmp_path):
    return Plan([Step("source", Numbers(PARTS)), Step("map", Halve()), Step("group", Parity()),
                 Step("map", HalveAgain())], parts=sorted(PARTS))


def test_same_counts_on_every_engine(tmp_path, spark):
    runs = [run_local(toy_plan(tmp_path)), beam_engine.run(toy_plan(tmp_path)),
            spark_engine.run(toy_plan(tmp_path), spark)]
    local, beam, sp = ([s.to_dict() for s in r.steps] for r in runs)
    assert local == beam == sp
    # the reject samples are the same too, whatever the partitioning
    samples = [[(x.step, sorted(x.by_reason.items())) for x in r.rejects] for r in runs]
    assert samples[0] == samples[1] == samples[2]
    assert {x.step for x in runs[0].rejects} == {"halve", "parity", "halve_again"}
    assert [s["name"] for s in local] == ["read", "halve", "parity", "halve_again"]
    assert local[0]["in"] == 18 and local[0]["dropped"] == {"read_bad_number": 3, "read_error_os_error": 1}
