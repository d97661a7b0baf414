"""The configuration reference: docs/config.md is what tools/config_doc.py writes from the
config dataclasses (regenerate: `python -m tools.config_doc`), every key has a meaning, and
`lait config --defaults` prints a complete YAML that loads back to the defaults."""
import dataclasses
import typing

import yaml

from pipeline import config
from tools import config_doc
from tools.cli import main


def all_keys() -> set[str]:
    hints = typing.get_type_hints(config.Config)
    return {f"{s.name}.{f.name}" for s in dataclasses.fields(config.Config)
            for f in dataclasses.fields(hints[s.name])}


def test_docs_config_md_is_up_to_date():
    with open(config_doc.DOC_PATH, encoding="utf-8") as f:
        assert f.read() == config_doc.markdown(), (
            "docs/config.md is stale: run `python -m tools.config_doc`")


def test_every_key_is_documented_with_type_default_and_meaning():
    doc = config_doc.markdown()
    keys = config_doc.keys()
    assert {f"{k.section}.{k.name}" for k in keys} == all_keys()
    missing = [f"{k.section}.{k.name}" for k in keys if not k.meaning]
    assert not missing, f"give these keys a docstring or comment: {missing}"
    for k in keys:
        assert f"| `{k.section}.{k.name}` | {k.type} |" in doc
    assert "| `fetch.timeout_s` | float | `10.0` | connect and read timeout" in doc
    assert "| `output.num_shards` | int or null | `null` |" in doc


def test_defaults_yaml_is_complete_and_loads_back(tmp_path, capsys):
    assert main(["config", "--defaults"]) == 0
    text = capsys.readouterr().out
    data = yaml.safe_load(text)
    assert {f"{s}.{k}" for s, section in data.items() for k in section} == all_keys()
    path = tmp_path / "defaults.yaml"
    path.write_text(text)
    loaded = config.load(str(path), {"input.warc": ["a.warc.gz"]})
    expected = config.from_dict({"input": {"warc": ["a.warc.gz"]}})
    assert loaded == expected
    assert "  timeout_s: 10.0  # connect and read timeout of each request" in text


def test_a_changed_default_makes_the_reference_stale(monkeypatch):
    before = config_doc.markdown()
    field = next(f for f in dataclasses.fields(config.RunConfig) if f.name == "buckets")
    monkeypatch.setattr(field, "default", 32)
    assert config_doc.markdown() != before and "| `run.buckets` | int | `32` |" in config_doc.markdown()


def test_auto_num_shards_rule():
    assert [config.auto_num_shards(n) for n in (0, 1, 10_000, 10_001, 1_000_000)] == [1, 1, 1, 2, 100]


def test_config_doc_help_prints_usage_and_writes_no_file(tmp_path, monkeypatch, capsys):
    # `python -m tools.config_doc --help` had written the reference into a file named
    # "--help"; an unknown option must be an error too, never a file name.
    monkeypatch.chdir(tmp_path)
    for argv, code in ((["--help"], 0), (["--bogus"], 2)):
        try:
            config_doc.main(argv)
        except SystemExit as e:
            assert e.code == code
        else:
            raise AssertionError(f"{argv} did not exit")
    assert "usage:" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_config_doc_writes_to_the_path_given(tmp_path):
    out = tmp_path / "config.md"
    assert config_doc.main([str(out)]) == 0
    assert out.read_text(encoding="utf-8") == config_doc.markdown()
