"""The same plan on the local executor, Beam (FnApiRunner) and Spark gives the same counts."""
import logging

import pytest
from apache_beam.options.pipeline_options import StandardOptions

from pipeline.core.errors import ConfigError
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


def test_beam_options_misspelt_fail_before_any_work_with_the_closest_name():
    """Beam only warns about an option it does not know: ``--runer=DataflowRunner`` ran the
    whole job in-process.  With the in-process runner nothing could read such an option."""
    with pytest.raises(ConfigError, match=r"--runer=DataflowRunner \(did you mean --runner\?\)"):
        beam_engine.pipeline_options(["--runer=DataflowRunner"])
    with pytest.raises(ConfigError, match="--temp_locaton"):
        beam_engine.pipeline_options(["--temp_locaton", "/tmp/x"])
    # Known options, with values given apart or after "=", pass; the default runner is set.
    opts = beam_engine.pipeline_options(["--direct_num_workers", "2", "--experiments=x"])
    assert opts.view_as(StandardOptions).runner == beam_engine.DEFAULT_RUNNER


def test_beam_options_unknown_to_python_pass_to_another_runner_with_a_warning(caplog):
    # A portable runner hands options the Python SDK does not define to its job server.
    with caplog.at_level(logging.WARNING, logger="pipeline.engines.beam"):
        opts = beam_engine.pipeline_options(["--runner=FlinkRunner", "--someJavaOption=1"])
    assert opts.view_as(StandardOptions).runner == "FlinkRunner"
    assert "--someJavaOption=1" in caplog.text


def test_lait_build_names_a_misspelt_beam_option_before_creating_anything(tmp_path):
    from pipeline.build import build

    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="did you mean --runner"):
        build(None, str(out), engine="beam", engine_args=["--runer=DataflowRunner"],
              overrides={"input.warc": [str(tmp_path / "a.warc.gz")]})
    assert not out.exists()
