"""Runs a plan on Apache Beam.  Stage logic lives in the cores; this file only translates.

Every Beam pipeline option passes through (``--runner``, ``--project``, ``--temp_location``,
...), so the same job runs on Dataflow, Flink or Spark runners.  The default runner is the
in-process FnApiRunner: Beam's DirectRunner first tries to download the Prism binary, which
fails without network access.
"""
from __future__ import annotations

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
from pipeline.core.plan import Plan, Step

DEFAULT_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"


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
    options = PipelineOptions(beam_args or [])
    std = options.view_as(StandardOptions)
    if not std.runner:
        std.runner = DEFAULT_RUNNER
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
