"""Runs a plan in this process with no engine: tests of stage wiring, small jobs, and the
``--engine local`` runs.  The same executor as Beam and Spark, so the same counts and bytes."""
from __future__ import annotations

from collections import defaultdict

from pipeline.core.executor import (
    RunSummary,
    group_key,
    run_group_partition,
    run_map_partition,
    run_source_partition,
)
from pipeline.core.plan import Plan


def run_local(plan: Plan) -> RunSummary:
    src, rest = plan.steps[0], plan.steps[1:]
    # Map steps are chained generators, as Beam fuses them: a record goes through all of
    # them before the next is read, so only group steps hold a whole wave (a page's parse
    # tree, kept on it from language to extract, lives for one page, not for the wave).
    items = run_source_partition(src, plan.parts)
    for step in rest:
        if step.kind == "map":
            items = run_map_partition(step, items)
        else:
            groups = defaultdict(list)
            for it in items:
                groups[group_key(step, it)].append(it)
            items = list(run_group_partition(step, sorted(groups.items())))
    return RunSummary(plan.step_names, [it for it in items if it[0] != "r"])
