"""Configuration gaps of issue 17.9: each fails at once with a message naming the key or path."""
import pytest

from pipeline import config
from pipeline.build import check_output_dir, engine_runner
from pipeline.core.errors import ConfigError
from pipeline.web import http as http_mod


def load(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text("input: {warc: [a.warc.gz]}\n" + text)
    return config.load(str(p))


@pytest.mark.parametrize("text, message", [
    ("text: {model_path: /nonexistent/lid.176.ftz}\n", "text.model_path.*/nonexistent/lid"),
    ("fetch: {user_agent: ''}\n", "fetch.user_agent"),
    ("fetch: {user_agent: '   '}\n", "fetch.user_agent"),
    ("fetch: {timeout_s: .inf}\n", "fetch.timeout_s.*finite"),
    ("fetch: {max_time_s: .nan}\n", "fetch.max_time_s.*finite"),
    ("fetch: {backoff_s: .inf}\n", "fetch.backoff_s.*finite"),
    ("fetch: {rate_per_host: -.inf}\n", "fetch.rate_per_host.*finite"),
    ("text: {lang_min_conf: .nan}\n", "text.lang_min_conf.*finite"),
    ("fetch: {retries: 1000}\n", "fetch.retries must be within 0..10"),
    ("fetch: {timeout_s: 5}\nfetch: {timeout_s: 6}\n", "duplicate key 'fetch'"),
    ("fetch: {timeout_s: 5, timeout_s: 6}\n", "duplicate key 'timeout_s'"),
])
def test_configuration_gaps_fail_at_load(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load(tmp_path, text)


def test_an_existing_model_path_is_accepted(tmp_path):
    import shutil

    from filters.language import default_model_path

    model = tmp_path / "lid.ftz"
    shutil.copy(default_model_path(), model)
    assert load(tmp_path, f"text: {{model_path: {model}}}\n").text.model_path == str(model)
    # a file that is not a language model: its labels (the targets' check) cannot be read
    model.write_bytes(b"x")
    with pytest.raises(ConfigError, match="text.model_path: not a fastText language model"):
        load(tmp_path, f"text: {{model_path: {model}}}\n")


def test_master_without_a_value_is_a_configuration_error():
    with pytest.raises(ConfigError, match="--master needs a value"):
        engine_runner("spark", ["--master"])
    with pytest.raises(ConfigError, match="--master needs a value"):
        engine_runner("spark", ["--master", "--other"])


def test_spark_engine_options_reach_the_session_or_fail_naming_them(monkeypatch):
    """`lait build --engine spark -- ...` read only `--master URL`: `--master=spark://...`
    (the spelling Beam's options use) ran on local[*] without a word, exit 0, and every other
    option (`--conf spark.executorEnv.AWS_...`, which a cluster's executors need) was
    dropped silently.  Both spellings of --master and of --conf now reach the session;
    anything else fails at once, naming it."""
    from pipeline.engines import spark as spark_engine

    got = []
    monkeypatch.setattr(spark_engine, "session", lambda master=None, conf=None: got.append((master, conf)))
    engine_runner("spark", ["--master=spark://h:7077"])
    engine_runner("spark", ["--master", "spark://h:7077", "--conf", "spark.executorEnv.A=1",
                            "--conf=spark.executor.memory=2g"])
    assert got == [("spark://h:7077", {}),
                   ("spark://h:7077", {"spark.executorEnv.A": "1", "spark.executor.memory": "2g"})]
    for args, message in ((["--master="], "--master needs a value"),
                          (["--conf", "spark.x"], "--conf needs KEY=VALUE.*spark.x"),
                          (["--deploy-mode", "cluster"], "--deploy-mode.*spark-submit"),
                          (["spark://h:7077"], "'spark://h:7077'")):
        with pytest.raises(ConfigError, match=message):
            engine_runner("spark", args)
    assert len(got) == 2


def test_the_local_engine_takes_no_engine_options():
    """`lait build --engine local -- --runner=X` ran, exit 0, and read none of it (the local
    engine has no options): the options after `--` are now an error naming them."""
    assert engine_runner("local", []) is not None and engine_runner("local", None) is not None
    with pytest.raises(ConfigError, match=r"--engine local takes no engine options.*--runner=X"):
        engine_runner("local", ["--runner=X"])


def test_output_dir_that_cannot_be_written_fails_naming_it(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(ConfigError, match=f"{f}.*not a directory"):
        check_output_dir(str(f))
    with pytest.raises(ConfigError, match=f"{f}"):
        check_output_dir(str(f / "sub" / "out"))
    check_output_dir(str(tmp_path / "new" / "out"))  # created
    assert (tmp_path / "new" / "out").is_dir()


def test_output_dir_read_only_fails_naming_it(tmp_path, monkeypatch):
    """A read-only directory (root ignores mode bits, so the refusal is simulated where the
    probe file is created)."""
    out = tmp_path / "ro"
    out.mkdir()
    real_open = __import__("os").open

    def refuse(path, *a, **kw):
        if str(path).startswith(str(out)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **kw)
    monkeypatch.setattr("pipeline.build.os.open", refuse)
    with pytest.raises(ConfigError, match=f"{out}.*not writable"):
        check_output_dir(str(out))


def test_retry_backoff_is_capped(monkeypatch):
    waits = []
    monkeypatch.setattr(http_mod.time, "sleep", waits.append)
    client = http_mod.HttpClient(http_mod.HttpSettings(user_agent="t", retries=10, backoff_s=5.0))

    def fail(*a, **kw):
        raise http_mod.FetchError("timeout")
    monkeypatch.setattr(client, "_get_once", fail)
    with pytest.raises(http_mod.FetchError):
        client.get("http://example.com/x")
    assert len(waits) == 10 and max(waits) <= http_mod.MAX_BACKOFF_S


def test_cli_exits_2_naming_the_problem(tmp_path, capsys):
    from tools.cli import main
    cfg = tmp_path / "c.yaml"
    cfg.write_text("input: {warc: [a.warc.gz]}\n")
    assert main(["build", "--config", str(cfg), "--out", str(tmp_path / "out"),
                 "--engine", "spark", "--", "--master"]) == 2
    assert "--master needs a value" in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["build", "--config", str(cfg), "--out", str(afile), "--engine", "local"]) == 2
    assert f"output dir {afile}: exists and is not a directory" in capsys.readouterr().err
    cfg.write_text("input: {warc: [a.warc.gz]}\nfetch: {timeout_s: .inf}\n")
    assert main(["build", "--config", str(cfg), "--out", str(tmp_path / "out"),
                 "--engine", "local"]) == 2
    assert "fetch.timeout_s" in capsys.readouterr().err


@pytest.mark.parametrize("lang, module", [("zh", "jieba"), ("ja", "MeCab"), ("ko", "MeCab")])
def test_a_text_target_whose_tokenizer_is_missing_fails_at_load(tmp_path, monkeypatch, lang,
                                                                 module):
    # wordfreq reads Chinese with jieba and Japanese / Korean with MeCab, optional packages
    # ('wordfreq[cjk]'): without them the text step crashed the run at its first wave.
    import filters.text as text_mod
    real = text_mod.find_spec
    monkeypatch.setattr(text_mod, "find_spec",
                        lambda name: None if name == module else real(name))
    with pytest.raises(ConfigError, match=f"text.targets.*'{lang}'.*{module}"):
        load(tmp_path, f"text: {{targets: [en, {lang}]}}\n")
    # German, French and a language wordfreq has no list of need nothing more
    assert load(tmp_path, "text: {targets: [en, de, fr, an]}\n").text.targets == \
        ["en", "de", "fr", "an"]


def test_dedup_without_the_hashes_it_compares_fails_at_load(tmp_path):
    # labels.phash: false left the dedup step no pHash to compare: every near-duplicate was
    # kept without a word (the demo's corpus: 49 samples -> 64, 15 copies)
    with pytest.raises(ConfigError, match="labels.phash.*dedup.enabled"):
        load(tmp_path, "labels: {phash: false}\n")
    cfg = load(tmp_path, "labels: {phash: false}\ndedup: {enabled: false}\n")
    assert not cfg.labels.phash and not cfg.dedup.enabled


def test_a_run_refused_before_any_work_does_not_block_the_corrected_command(tmp_path, capsys):
    """The work dir was stamped with the configuration before the inputs were listed, so a
    typo in input.warc (exit 2, naming the pattern) left a stamp, and the corrected command
    on the same --out was refused: "holds a run made with another configuration".  With no
    finished wave there is nothing to mix: the stamp is replaced."""
    from tools.cli import main

    out = str(tmp_path / "out")
    base = ["build", "--out", out, "--engine", "local", "--input"]
    assert main([*base, str(tmp_path / "crawl-typo" / "*.warc.gz")]) == 2
    assert "crawl-typo" in capsys.readouterr().err
    assert main([*base, str(tmp_path / "crawl" / "*.warc.gz")]) == 2
    err = capsys.readouterr().err
    assert "another configuration" not in err and "matches no" in err and "crawl/" in err
