import pytest

from pipeline import config


def test_defaults_and_overrides(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("input: {warc: [a.warc.gz]}\nimage: {min_width: 200}\n")
    cfg = config.load(str(p), {"output.num_shards": 8})
    assert cfg.image.min_width == 200 and cfg.image.min_height == 300
    assert cfg.output.num_shards == 8 and cfg.input.warc == ["a.warc.gz"]


@pytest.mark.parametrize("text, message", [
    ("input: {warc: [a]}\nimage: {min_widht: 3}\n", "unknown key"),
    ("input: {warc: [a]}\nimage: {min_width: big}\n", "image.min_width: expected an integer"),
    ("input: {warc: [a]}\nimage: {min_width: 0}\n", "image.min_width must be > 0"),
    ("input: {warc: []}\n", "input.warc"),
    ("input: {warc: [a]}\nfetch: {allow_private: yes please}\n", "fetch.allow_private"),
    ("input: {warc: [a]}\nfetch: {dns_cache_size: -1}\n", r"fetch.dns_cache_size must be within 0\.\."),
    ("input: {warc: [a]}\nfetch: {dns_cache_size: 2000000}\n", "fetch.dns_cache_size must be within"),
    ("input: {warc: [a]}\nfetch: {dns_cache_size: lots}\n", "fetch.dns_cache_size: expected an integer"),
    ("crawl: {seeds: [http://x/], dns_cache_size: -5}\n", "crawl.dns_cache_size must be within"),
    ("input: [oops\n", "not valid YAML"),
    # a code the language model does not answer kept no page (the run ended with an empty
    # corpus, after every fetch); fastText's lid.176 answers 176 languages, "eng" not among them
    ("input: {warc: [a]}\nlanguage: {targets: [en, eng]}\n",
     r"language.targets: \['eng'\] is not among the 176 languages"),
    ("input: {warc: [a]}\ntext: {targets: [xx]}\n", r"text.targets: \['xx'\] is not among"),
    ("- input\n- text\n", "config .*c.yaml: expected a mapping of sections .* got a list"),
    ('"input"\n', "config .*c.yaml: expected a mapping of sections .* got a str"),
])
def test_bad_configuration_fails_fast_with_the_key(tmp_path, text, message):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(config.ConfigError, match=message):
        config.load(str(p))


def test_a_yaml_syntax_error_is_one_line_with_its_place(tmp_path):
    # PyYAML's message spans four lines (context and problem, each with its mark); the CLI
    # prints one line per user error.
    p = tmp_path / "c.yaml"
    p.write_text("input:\n  warc: [a\n")
    with pytest.raises(config.ConfigError) as err:
        config.load(str(p))
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"config {p} is not valid YAML: line 3, column 1: expected ',' or ']'")
