"""The same plan on the local executor, Beam (FnApiRunner) and Spark gives the same counts."""
from pipeline import beam_driver, spark_driver
from pipeline.executor import run_local
from pipeline.plan import Plan, Step
from tests.pipeline.test_stage import Halve, Numbers, Parity


class HalveAgain(Halve):
    name = "halve_again"

PARTS = ["1,2,bad,4", "7,8,boom", "10,12,14,16,18,20,22", "3,5,bad,bad"]


def toy_plan(tmp_path):
    return Plan([Step("source", Numbers(PARTS)), Step("map", Halve()), Step("group", Parity()),
                 Step("map", HalveAgain())], parts=sorted(PARTS), out_dir=str(tmp_path))


def test_same_counts_on_every_engine(tmp_path, spark):
    local = [s.to_dict() for s in run_local(toy_plan(tmp_path))]
    beam = [s.to_dict() for s in beam_driver.run(toy_plan(tmp_path))]
    sp = [s.to_dict() for s in spark_driver.run(toy_plan(tmp_path), spark)]
    assert local == beam == sp
    assert [s["name"] for s in local] == ["read", "halve", "parity", "halve_again"]
    assert local[0]["in"] == 18 and local[0]["dropped"] == {"read_bad_number": 3, "read_error_os_error": 1}
