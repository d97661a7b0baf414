"""`python -m tools.phash_distance` takes no arguments: `--help` prints the usage and an
unknown argument is an error, both before the measurement (it had ignored its arguments and
run the whole measurement for `--help`)."""
import pytest

from tools import phash_distance


@pytest.mark.parametrize("argv,code", [(["--help"], 0), (["--bogus"], 2), (["x"], 2)])
def test_arguments_are_parsed_before_the_measurement(argv, code, monkeypatch, capsys):
    def measured():
        raise AssertionError("measured before the arguments were checked")

    monkeypatch.setattr(phash_distance, "measure", measured)
    with pytest.raises(SystemExit) as e:
        phash_distance.main(argv)
    assert e.value.code == code
    out = capsys.readouterr()
    assert "usage:" in (out.out if code == 0 else out.err)
