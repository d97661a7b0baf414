"""Runs a plan on Apache Beam.  Stage logic lives in the cores; this file only translates.

Every Beam pipeline option passes through (``--runner``, ``--project``, ``--temp_location``,
...), so the same job runs on Dataflow, Flink or Spark runners.  The default runner is the
in-process FnApiRunner: Beam's DirectRunner first tries to download the Prism binary, which
fails without network access.
"""
from __future__ import annotations

import os
import pickle

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from pipeline import executor
from pipeline.plan import Plan, Step

DEFAULT_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
PARTIAL_STATS = "_aux.partial.pickle"


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
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(path) as f:
        f.write(pickle.dumps(obj))


def run(plan: Plan, beam_args: list[str] | None = None) -> executor.RunSummary:
    options = PipelineOptions(beam_args or [])
    std = options.view_as(StandardOptions)
    if not std.runner:
        std.runner = DEFAULT_RUNNER
    partial = os.path.join(plan.out_dir, PARTIAL_STATS)
    with beam.Pipeline(options=options) as p:
        (p
         | "LAIT" >> LaitPipeline(plan)
         | "Collect" >> beam.CombineGlobally(_CollectAux())
         | "Hand over" >> beam.Map(lambda items, path=partial: _write_pickle(path, items)))
    with open(partial, "rb") as f:
        items = pickle.load(f)
    os.unlink(partial)
    return executor.RunSummary(plan.step_names, items)
