"""DataLoader workers are capped at the cores a rank may use (minus the training loop's), with
a warning, instead of starting configs/imagebert.yaml's 8 on a small machine."""
import logging

from model.stream import loader_workers


def test_eight_workers_on_two_cores_warn_and_cap(caplog):
    with caplog.at_level(logging.WARNING, logger="model.data"):
        assert loader_workers(8, world=1, cores=2) == 1
    assert "data.num_workers=8 but 2 core(s) per process: using 1" in caplog.text


def test_workers_that_fit_are_kept_silently(caplog):
    with caplog.at_level(logging.WARNING, logger="model.data"):
        assert loader_workers(8, world=1, cores=16) == 8
        assert loader_workers(0, world=1, cores=1) == 0
        assert loader_workers(3, world=4, cores=16) == 3
    assert not caplog.text


def test_ranks_share_the_cores():
    assert loader_workers(8, world=8, cores=16) == 1  # 2 cores per rank: one for the loop
