"""The layering holds: the import contracts of .importlinter, no import cycle, and every step's
file, class and name agree.

Cycles are checked twice: between modules, and between the layers' units (pipeline.core,
pipeline.web, pipeline.steps, pipeline.engines, each plan-level module of pipeline/, filters,
scoring, model, tools).  The top-level package ``pipeline`` itself is not a unit: it holds the
lowest layer (core) and the plan assembly above filters and scoring, as DESIGN.md lays out.
"""
import contextlib
import inspect
import io
import logging
import os

import grimp
import pytest
from importlinter.cli import lint_imports

from tests.conftest import REPO

PACKAGES = ("pipeline", "filters", "scoring", "model", "tools")
SUBPACKAGE_UNITS = ("pipeline.core", "pipeline.web", "pipeline.steps", "pipeline.engines",
                    "tools.sampleweb")


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def unit(module: str) -> str:
    for u in SUBPACKAGE_UNITS:
        if module == u or module.startswith(u + "."):
            return u
    top = module.split(".")[0]
    return module if top == "pipeline" else top


def test_import_contracts_hold():
    out = io.StringIO()
    cwd = os.getcwd()
    # import-linter configures logging with disable_existing_loggers: without restoring them,
    # every later test that reads a module's log records (caplog) would see none.
    loggers = [lg for lg in logging.root.manager.loggerDict.values()
               if isinstance(lg, logging.Logger) and not lg.disabled]
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            rc = lint_imports(config_filename=str(REPO / ".importlinter"), no_cache=True,
                              no_logo=True)
    finally:
        os.chdir(cwd)
        for lg in loggers:
            lg.disabled = False
    assert rc == 0, out.getvalue()


def test_no_import_cycle_between_modules(graph):
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert cycles(edges) == []


def test_no_import_cycle_between_layer_units(graph):
    edges: dict[str, set[str]] = {}
    for m in graph.modules:
        for dep in graph.find_modules_directly_imported_by(m):
            if unit(dep) != unit(m):
                edges.setdefault(unit(m), set()).add(unit(dep))
    assert cycles(edges) == []


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def _words(name: str) -> list[str]:
    return [w[:-1] if w.endswith("s") else w for w in name.split("_")]


def test_every_step_file_class_and_name_agree(tmp_path):
    """A step's stage lives in ``<step name>.py`` and its class names the step's words
    (``best_text`` -> ``scoring/best_text.py`` -> ``BestText``); the internal work-file steps
    (``work_in``, ``work_out``) share ``pipeline/steps/work.py``."""
    from pipeline.config import from_dict
    from pipeline.jobs import corpus_steps, image_steps, page_steps
    from pipeline.steps.crawl import CrawlSource
    from pipeline.steps.read import WarcReader
    from pipeline.steps.work import WorkSink, WorkSource

    (tmp_path / "a.warc.gz").write_bytes(b"")
    cfg = from_dict({"input": {"warc": [str(tmp_path / "a.warc.gz")]}})
    stages = [s.stage for s in page_steps(cfg) + image_steps(cfg) + corpus_steps(cfg, str(tmp_path), 4)]
    stages += [WarcReader([str(tmp_path / "a.warc.gz")]), CrawlSource(["http://example.com/"])]
    names = [st.name for st in stages]
    assert len(names) == len(set(names)) and "naturalness" in names and "best_text" in names
    for st in stages:
        # the dedup step's internal band passes (dedup_band_0, ...) live with it in dedup.py
        step = st.name.split("_band_")[0] if getattr(st, "internal", False) else st.name
        path = inspect.getfile(type(st))
        assert os.path.splitext(os.path.basename(path))[0] == step, (st.name, path)
        cls = type(st).__name__.lower()
        assert all(w in cls for w in _words(step)), (st.name, type(st).__name__)
    for cls in (WorkSink, WorkSource):
        assert cls.internal and cls.name.startswith("work_")
        assert inspect.getfile(cls).endswith(os.path.join("pipeline", "steps", "work.py"))

