"""Runs a plan on Apache Beam.  Stage logic lives in the cores; this file only translates.

Every Beam pipeline option passes through (``--runner``, ``--project``, ``--temp_location``,
...), so the same job runs on Dataflow, Flink or Spark runners.  The default runner is the
in-process FnApiRunner: Beam's DirectRunner first tries to download the Prism binary, which
fails without network access.
"""
from __future__ import annotations

import argparse
import difflib
import logging
import pickle
import shutil
import tempfile
import uuid

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import (
    GoogleCloudOptions,
    PipelineOptions,
    StandardOptions,
)
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from pipeline.core import executor
from pipeline.core.errors import ConfigError
from pipeline.core.plan import Plan, Step

DEFAULT_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
_log = logging.getLogger(__name__)


def _known_flags() -> list[str]:
    """Every option string of every PipelineOptions class imported (Beam's own, a runner's,
    a user's), as Beam itself collects them to parse."""
    parser = argparse.ArgumentParser(allow_abbrev=False, add_help=False)
    for cls in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        cls._add_argparse_args(parser)  # noqa: SLF001 (the one way Beam exposes its flags)
    return [opt for action in parser._actions for opt in action.option_strings]  # noqa: SLF001


def pipeline_options(beam_args: list[str] | None) -> PipelineOptions:
    """The PipelineOptions for a run, checked before any work.

    Beam discards an option it does not know with a warning in the middle of its log, so
    ``--runer=DataflowRunner`` ran the whole job in-process.  With the in-process runner
    nothing downstream could read an unknown option, so any is a configuration error, named
    with Beam's closest known option.  Another runner may hand unknown options to its job
    server (a Flink or Java SDK option), so there they pass through as Beam passes them,
    with one warning naming them."""
    args = list(beam_args or [])
    options = PipelineOptions(args)
    std = options.view_as(StandardOptions)
    if not std.runner:
        std.runner = DEFAULT_RUNNER
    flags = _known_flags()
    unknown = [a for a in args if a.startswith("-") and a.split("=", 1)[0] not in flags]
    if not unknown:
        return options
    named = []
    for arg in unknown:
        close = difflib.get_close_matches(arg.split("=", 1)[0], flags, n=1)
        named.append(f"{arg} (did you mean {close[0]}?)" if close else arg)
    if std.runner == DEFAULT_RUNNER:
        raise ConfigError("Beam option(s) that no PipelineOptions class defines, which the "
                          "in-process runner would ignore: " + ", ".join(named))
    _log.warning("Beam options not known to the Python SDK, passed to runner %s as Beam does: %s",
                 std.runner, ", ".join(named))
    return options


class _StepFn(beam.DoFn):
    """One plan step as a DoFn; counts leave in finish_bundle as data."""

    def __init__(self, step: Step):
        self.step = step
        self.runner = None

    def start_bundle(self):
        self.runner = executor.StepRunner(self.step)

    def process(self, element):
        kind = self.step.kind
        if kind == "source":
            yield from self.runner.feed_part(element)
        elif kind == "map":
            yield from self.runner.feed(element)
        else:
            key, items = element
            yield from self.runner.feed_group(key, items)

    def finish_bundle(self):
        for item in self.runner.flush():
            yield WindowedValue(item, MIN_TIMESTAMP, [GlobalWindow()])


class _CollectAux(beam.CombineFn):
    """Gathers the (small) counts and reject samples into one list for the driver."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, item):
        acc.append(item)
        return acc

    def merge_accumulators(self, accs):
        return [it for acc in accs for it in acc]

    def extract_output(self, acc):
        return acc


class LaitPipeline(beam.PTransform):
    """parts -> records through every step of the plan -> partial counts (the only output)."""

    def __init__(self, plan: Plan):
        super().__init__()
        self.plan = plan

    def expand(self, pbegin):
        pc = pbegin | "Parts" >> beam.Create(self.plan.parts) | "Spread" >> beam.Reshuffle()
        for step in self.plan.steps:
            if step.kind == "group":
                pc = (pc
                      | f"Key {step.name}" >> beam.Map(lambda it, s=step: (executor.group_key(s, it), it))
                      | f"Group {step.name}" >> beam.GroupByKey())
            pc = pc | f"Step {step.name}" >> beam.ParDo(_StepFn(step))
        return pc | "Counts and samples" >> beam.Filter(lambda it: it[0] != "r")


def _write_pickle(path: str, obj) -> None:
    with FileSystems.create(path) as f:
        f.write(pickle.dumps(obj))


def run(plan: Plan, beam_args: list[str] | None = None) -> executor.RunSummary:
    """Runs the plan; the counts and reject samples come back to this process as one file.

    Beam has no portable way to hand a PCollection back to the driver (on Dataflow or Flink
    the workers are other machines), so the one combined list of counts is written with
    Beam's FileSystems (local, gs://, s3://) to ``--temp_location`` if given, else to a local
    temporary directory (enough for in-process and local runners), and read back here.  It
    never touches the output directory."""
    options = pipeline_options(beam_args)
    temp = options.view_as(GoogleCloudOptions).temp_location
    local_dir = None if temp else tempfile.mkdtemp(prefix="lait-beam-")
    handover = FileSystems.join(temp or local_dir, f"lait-counts-{uuid.uuid4().hex}.pickle")
    try:
        with beam.Pipeline(options=options) as p:
            (p
             | "LAIT" >> LaitPipeline(plan)
             | "Collect" >> beam.CombineGlobally(_CollectAux())
             | "Hand over" >> beam.Map(lambda items, path=handover: _write_pickle(path, items)))
        with FileSystems.open(handover) as f:
            items = pickle.loads(f.read())
        FileSystems.delete([handover])
    finally:
        if local_dir:
            shutil.rmtree(local_dir, ignore_errors=True)
    return executor.RunSummary(plan.step_names, items)
