"""The `lait` command line: options, overrides, engine pass-through, and one-line user errors
(exit 2) where a traceback used to be."""
import json
import os
import socket
import subprocess
import sys
import tarfile

import pytest

from pipeline.core import overrides
from pipeline.core.errors import ConfigError
from tests.conftest import REPO
from tools import cli

CONFIG = str(REPO / "configs" / "demo.yaml")


@pytest.fixture()
def captured_build(monkeypatch):
    """Replaces the pipeline run: records what the CLI would build with."""
    calls = []

    def fake_build(config_path, out_dir, engine="beam", engine_args=None, overrides=None,
                   retry_failed=False):
        from pipeline import config as config_mod

        cfg = config_mod.load(config_path, overrides)  # validated exactly as a real build
        calls.append({"config": config_path, "engine": engine, "engine_args": engine_args,
                      "overrides": overrides, "cfg": cfg})
        return {"steps": [{"name": "write", "kept": 1}], "engine": engine}

    monkeypatch.setattr(cli, "build", fake_build)
    monkeypatch.setattr(cli, "format_funnel", lambda doc: "funnel")
    return calls


def run_cli(argv, capsys):
    try:
        rc = cli.main(argv)
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


# --- item 1: --set, unknown options, engine options after `--` ---------------------------

def test_override_parser_is_yaml_scalars():
    assert overrides.parse(["text.min_words=1", "image.keep=true", "a.b=0.5", "c=x",
                            "input.warc=[a.gz, b.gz]", "e="]) == {
        "text.min_words": 1, "image.keep": True, "a.b": 0.5, "c": "x",
        "input.warc": ["a.gz", "b.gz"], "e": ""}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        overrides.parse(["text.min_words"])
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        overrides.parse(["text..min_words=1"])
    with pytest.raises(ConfigError, match="text is a int"):
        overrides.apply({"text": 3}, {"text.min_words": 1})
    assert overrides.apply({"stages": {1: {"steps": 5}}}, {"stages.1.steps": 7}) == {
        "stages": {1: {"steps": 7}}}


def test_set_reaches_the_config(captured_build, tmp_path, capsys):
    rc, out, _ = run_cli(["build", "--config", CONFIG, "--out", str(tmp_path), "--engine", "local",
                          "--set", "text.min_words=1", "--set", "output.num_shards=2"], capsys)
    assert rc == 0
    cfg = captured_build[0]["cfg"]
    assert cfg.text.min_words == 1 and cfg.output.num_shards == 2
    assert cfg.text.max_words == 40  # the rest still comes from the YAML


@pytest.mark.parametrize("setting, message", [
    ("text.min_wordz=1", "text: unknown key(s) ['min_wordz']"),
    ("text.min_words=three", "text.min_words: expected an integer, got 'three'"),
    ("frobnicate.x=1", "unknown key(s) ['frobnicate']"),
    ("text.min_words", "--set 'text.min_words': expected KEY=VALUE"),
])
def test_bad_set_names_the_key(captured_build, tmp_path, capsys, setting, message):
    rc, _, err = run_cli(["build", "--config", CONFIG, "--out", str(tmp_path), "--set", setting],
                         capsys)
    assert rc == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_build_option_is_rejected(captured_build, tmp_path, capsys):
    rc, _, err = run_cli(["build", "--config", CONFIG, "--out", str(tmp_path),
                          "--frobnicate", "1"], capsys)
    assert rc == 2 and "unrecognized arguments: --frobnicate 1" in err
    assert not captured_build
    # the usage shown is the subcommand's, whose options the user was typing
    assert "usage: lait build " in err and "lait build: error:" in err
    rc, _, err = run_cli(["build", "--config", CONFIG, "--out", str(tmp_path),
                          "--runner=FlinkRunner"], capsys)
    assert rc == 2 and "engine options go after a `--` separator" in err
    assert not captured_build
    # --resume is what a user types first: the error says how a build resumes
    rc, _, err = run_cli(["build", "--config", CONFIG, "--out", str(tmp_path), "--resume"], capsys)
    assert rc == 2 and "unrecognized arguments: --resume" in err
    assert "run the same command again" in err and "--retry-failed" in err
    assert not captured_build


def test_engine_options_after_separator(captured_build, tmp_path, capsys):
    argv = ["build", "--config", CONFIG, "--out", str(tmp_path), "--engine", "spark", "--",
            "--master", "spark://h:7077", "--frobnicate=1"]
    rc, _, _ = run_cli(argv, capsys)
    assert rc == 0
    assert captured_build[0]["engine_args"] == ["--master", "spark://h:7077", "--frobnicate=1"]
    rc, _, err = run_cli(["stats", str(tmp_path), "--", "--runner=X"], capsys)
    assert rc == 2 and "stats takes no engine options" in err


@pytest.fixture(scope="module")
def built(sample_web, tmp_path_factory):
    """One real (local-engine) build through the CLI, with --input and --set."""
    out = tmp_path_factory.mktemp("cli") / "out"
    warc = str(sample_web / "pages.warc.gz")
    rc = cli.main(["build", "--config", CONFIG, "--out", str(out), "--engine", "local",
                   "--input", warc, "--set", "text.min_words=1"])
    assert rc == 0
    return out, warc


def test_set_reaches_stats_json(built):
    """The override is in stats.json's config, and --input replaced the YAML's input.warc."""
    out, warc = built
    doc = json.loads((out / "stats.json").read_text())
    assert doc["config"]["text"]["min_words"] == 1
    assert doc["config"]["input"]["warc"] == [warc]
    assert (out / "shards").is_dir()


# --- item 7: --version, --help, --input -----------------------------------------------------

def test_version(capsys):
    rc, out, _ = run_cli(["--version"], capsys)
    setup_py = (REPO / "setup.py").read_text()
    assert rc == 0 and out.startswith("lait ")
    assert f'version="{out.split()[1]}"' in setup_py


def test_build_help_documents_every_option(capsys):
    rc, out, _ = run_cli(["build", "--help"], capsys)
    assert rc == 0
    for option in ("--config", "--out", "--engine", "--set", "--input", "beam", "spark", "local",
                   "`--` separator", "PipelineOptions", "--master"):
        assert option in out, option
    # every option has its own help text (argparse prints the option alone on its line otherwise)
    build_parser = cli.parser()._subparsers._group_actions[0].choices["build"]
    assert all(a.help for a in build_parser._actions)


def test_input_without_config(captured_build, tmp_path, capsys):
    rc, _, _ = run_cli(["build", "--input", "a.warc.gz", "crawl/*.warc.gz", "--out",
                        str(tmp_path)], capsys)
    assert rc == 0
    call = captured_build[0]
    assert call["config"] is None and call["cfg"].input.warc == ["a.warc.gz", "crawl/*.warc.gz"]
    assert call["cfg"].text.min_words == 3  # the defaults
    rc, _, err = run_cli(["build", "--out", str(tmp_path)], capsys)
    assert rc == 2 and "give --config FILE.yaml, or --input" in err


# --- item 4: one-line errors ----------------------------------------------------------------

def test_stats_of_a_missing_dir(tmp_path, capsys):
    rc, _, err = run_cli(["stats", str(tmp_path / "nonexistent")], capsys)
    assert rc == 2 and err.startswith("lait: stats: ") and "nonexistent" in err
    assert len(err.strip().splitlines()) == 1


def test_report_of_an_unfinished_run_names_the_missing_stats(tmp_path, capsys):
    # a killed build leaves _work/ and no stats.json: say what is missing, as `lait stats` does
    (tmp_path / "run" / "_work").mkdir(parents=True)
    rc, _, err = run_cli(["report", str(tmp_path / "run")], capsys)
    assert rc == 2 and err.startswith("lait: report: ")
    assert "stats.json: no such file" in err and "finished build" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "report.html").exists()


def test_report_of_a_run_whose_shards_are_gone_says_so(tmp_path, capsys):
    # stats.json counts written samples but shards/ was moved away: a report of 0 samples would
    # read as an empty corpus
    run = tmp_path / "run"
    run.mkdir()
    (run / "stats.json").write_text(json.dumps({"steps": [
        {"name": "write", "in": 19, "kept": 19, "out": 0, "dropped": {}}]}))
    rc, _, err = run_cli(["report", str(run)], capsys)
    assert rc == 2 and err.startswith("lait: report: ")
    assert "19 samples written" in err and "holds none" in err
    assert not (run / "report.html").exists()


def run_on_fresh_s3(command: str, capsys) -> tuple[int, str]:
    """`lait COMMAND s3://lait/run` with S3 clients made from the environment as set now."""
    from pipeline.core import storage

    fs = storage.filesystem("s3://lait/run")[0]
    fs.clear_instance_cache()
    try:
        rc, _, err = run_cli([command, "s3://lait/run"], capsys)
    finally:
        fs.clear_instance_cache()
    return rc, err


@pytest.mark.parametrize("command", ["stats", "report"])
def test_stats_and_report_of_an_unreachable_store_are_one_line(command, capsys, monkeypatch):
    """`lait stats s3://bucket/run` with the store down (or AWS_ENDPOINT_URL wrong) was a
    90-line botocore traceback, exit 1."""
    from tests.pipeline.test_spark_cluster import free_port

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}.items():
        monkeypatch.setenv(name, value)  # a port nothing listens on
    rc, err = run_on_fresh_s3(command, capsys)
    assert rc == 2 and err.startswith(f"lait: {command}: cannot read s3://lait/run"), err[-2000:]
    assert "EndpointConnectionError" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["stats", "report"])
def test_stats_and_report_with_wrong_credentials_name_the_run(command, capsys, monkeypatch):
    """With a key the store does not know, `lait stats s3://bucket/run` said only "lait: stats:
    Forbidden": not which URL, nor that it was about reading it."""
    from moto import settings

    from tests.remote import s3_env, start_s3

    srv, endpoint = start_s3()
    try:
        for name, value in {**s3_env(endpoint), "AWS_ACCESS_KEY_ID": "AKIAUNKNOWNKEY000000"}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # moto checks keys
        rc, err = run_on_fresh_s3(command, capsys)
    finally:
        srv.stop()
    assert rc == 2 and len(err.strip().splitlines()) == 1, err[-2000:]
    assert err.startswith(f"lait: {command}: cannot read s3://lait/run: forbidden ("), err


def test_cli_subprocess_errors_are_one_line():
    res = subprocess.run([sys.executable, "-m", "tools.cli", "stats", "/nonexistent"],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 2 and "/nonexistent/stats.json: no such file" in res.stderr
    assert "Traceback" not in res.stderr


def test_stats_into_a_closed_pipe_is_quiet(built):
    """`lait stats out | head`: the reader goes away; no BrokenPipeError traceback."""
    out, _ = built
    proc = subprocess.Popen([sys.executable, "-m", "tools.cli", "stats", str(out)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # closed before the command writes a byte
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and err == ""


def test_stats_prints_the_funnel(built, capsys):
    out, _ = built
    rc, stdout, _ = run_cli(["stats", str(out)], capsys)
    assert rc == 0 and "write" in stdout


def test_demo_on_a_busy_port_fails_before_generating(tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        web = tmp_path / "web"
        rc, _, err = run_cli(["demo", "--port", str(port), "--web", str(web),
                              "--out", str(tmp_path / "out"), "--no-train"], capsys)
    assert rc == 2 and f"127.0.0.1:{port}" in err and "--port" in err
    assert len(err.strip().splitlines()) == 1
    assert not (web / "site.json").exists()  # nothing generated


@pytest.mark.parametrize("extra,says", [
    (["--engine", "local", "--", "x"], "--engine local takes no engine options (after `--`): x"),
    (["--engine", "spark", "--", "--bogus"], "Spark engine option '--bogus'"),
    (["--engine", "beam", "--", "--bogus"], "--bogus"),
    (["--config", "BAD"], "unknown key(s) ['min_wordz']"),
    (["--out", "FILE"], "exists and is not a directory"),
])
def test_demo_with_bad_configuration_fails_before_generating(tmp_path, capsys, extra, says):
    """A stray engine option, a bad config key or an unusable --out fails at once, in one line,
    before the sample web is generated (it used to fail in the build, after it)."""
    from tests.conftest import free_port

    (tmp_path / "bad.yaml").write_text("text:\n  min_wordz: 1\n")
    (tmp_path / "file").write_text("")
    extra = [{"BAD": str(tmp_path / "bad.yaml"), "FILE": str(tmp_path / "file")}.get(a, a) for a in extra]
    web = tmp_path / "web"
    rc, _, err = run_cli(["demo", "--port", str(free_port()), "--web", str(web),
                          "--out", str(tmp_path / "out"), "--no-train", *extra], capsys)
    assert rc == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not (web / "site.json").exists()  # nothing generated


def test_features_without_shards_or_samples(tmp_path, capsys):
    rc, _, err = run_cli(["features", str(tmp_path), str(tmp_path / "f"), "--grid", "2",
                          "--quiet"], capsys)
    assert rc == 2 and f"no .tar shards in {tmp_path}" in err and "Traceback" not in err
    empty = tmp_path / "run" / "shards"
    empty.mkdir(parents=True)
    with tarfile.open(empty / "00000.tar", "w"):
        pass  # a run whose filters kept nothing
    rc, _, err = run_cli(["features", str(tmp_path / "run"), str(tmp_path / "f"), "--grid", "2",
                          "--quiet"], capsys)
    assert rc == 2 and "hold no samples" in err and f"lait stats {tmp_path / 'run'}" in err


def test_train_with_missing_shards(tmp_path, capsys):
    missing = tmp_path / "nothing"
    rc, _, err = run_cli(["train", "--config", str(REPO / "configs" / "imagebert_tiny.yaml"),
                          "--stage", "1", "--set", f"stages.1.shards={missing}",
                          "--set", f"out_dir={tmp_path / 'ib'}", "--quiet"], capsys)
    assert rc == 2 and f"no .tar shards found for '{missing}'" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_verbose_shows_the_traceback(tmp_path, capsys):
    rc, _, err = run_cli(["-v", "stats", str(tmp_path / "nonexistent")], capsys)
    assert rc == 2 and "Traceback" in err and err.rstrip().endswith("finished build?)")


# --- item 6 (the CLI's part): quiet by default ----------------------------------------------

def test_local_spark_gets_loopback(captured_build, tmp_path, capsys, monkeypatch):
    for name in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        monkeypatch.setenv(name, "x")
        monkeypatch.delenv(name)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    base = ["build", "--config", CONFIG, "--out", str(tmp_path), "--engine", "spark"]
    assert run_cli(base + ["--", "--master", "spark://h:7077"], capsys)[0] == 0
    assert "SPARK_LOCAL_IP" not in os.environ  # a cluster: left alone
    assert run_cli(base, capsys)[0] == 0
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    monkeypatch.setenv("SPARK_LOCAL_IP", "10.0.0.5")
    assert run_cli(base, capsys)[0] == 0
    assert os.environ["SPARK_LOCAL_IP"] == "10.0.0.5"  # the user's value wins


def test_beam_apitools_warning_is_silenced():
    code = ("import logging, sys; from tools import cli; cli._setup_logging(int(sys.argv[1])); "
            "import apache_beam.io.gcp.internal.clients.bigquery; "
            "logging.warning('apitools not found, and bigquery client libraries are not available'); "
            "logging.warning('a warning the user can act on')")
    quiet = subprocess.run([sys.executable, "-c", code, "0"], capture_output=True, text=True,
                           cwd=REPO, check=True)
    assert "apitools" not in quiet.stderr and "a warning the user can act on" in quiet.stderr
    debug = subprocess.run([sys.executable, "-c", code, "2"], capture_output=True, text=True,
                           cwd=REPO, check=True)
    assert "apitools not found" in debug.stderr  # -vv shows everything


def test_demo_configs_found_outside_the_checkout(tmp_path, monkeypatch):
    from tools import demo

    monkeypatch.chdir(tmp_path)
    assert demo.checkout_path("configs/demo.yaml") == str(REPO / "configs" / "demo.yaml")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "demo.yaml").write_text("input: {warc: [x]}\n")
    assert demo.checkout_path("configs/demo.yaml") == "configs/demo.yaml"  # the user's own wins
    assert demo.checkout_path("configs/missing.yaml") == "configs/missing.yaml"


def test_verbose_after_the_command(tmp_path, capsys):
    rc, _, err = run_cli(["stats", str(tmp_path / "nonexistent"), "-v"], capsys)
    assert rc == 2 and "Traceback" in err
    assert cli.parser().parse_args(["-v", "stats", "x"]).verbose == 1
    assert cli.parser().parse_args(["stats", "x", "-vv"]).verbose == 2
    assert cli.parser().parse_args(["stats", "x"]).verbose == 0


def test_spark_s_ctrl_c_traceback_is_silenced():
    """On Spark a Ctrl-C lands in pyspark's SIGINT handler during a py4j call, and py4j logs
    "KeyboardInterrupt while sending command." on the root logger with some 45 lines of
    chained tracebacks above lait's one "interrupted" line.  Quiet unless -v."""
    code = ("import logging, sys; from tools import cli; cli._setup_logging(int(sys.argv[1]))\n"
            "try:\n    raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n"
            "    logging.getLogger().exception('KeyboardInterrupt while sending command.')\n"
            "try:\n    try:\n        raise RuntimeError('reentrant call inside <_io.BufferedReader name=6>')\n"
            "    except RuntimeError:\n        raise OSError('Error while sending or receiving')\n"
            "except OSError:\n    logging.exception('Exception while sending command.')\n"
            "logging.warning('a warning the user can act on')")
    quiet = subprocess.run([sys.executable, "-c", code, "0"], capture_output=True, text=True,
                           cwd=REPO, check=True)
    assert "KeyboardInterrupt" not in quiet.stderr and "a warning the user can act on" in quiet.stderr
    assert "reentrant" not in quiet.stderr and "Exception while sending" not in quiet.stderr
    verbose = subprocess.run([sys.executable, "-c", code, "1"], capture_output=True, text=True,
                             cwd=REPO, check=True)
    assert "KeyboardInterrupt while sending command." in verbose.stderr
    assert "reentrant call" in verbose.stderr


def test_a_build_that_read_nothing_says_so(tmp_path, monkeypatch, capsys):
    """A 0-byte .warc.gz (or WARCs with no response record) gives an empty corpus; the message
    sent the user to "the funnel above for where everything was dropped", where nothing was
    dropped: every row is 0.  It now says the inputs held no record."""
    steps = [{"name": "read", "in": 0, "kept": 0, "out": 0, "dropped": {}},
             {"name": "write", "in": 0, "kept": 0, "out": 0, "dropped": {}}]
    monkeypatch.setattr(cli, "build", lambda *a, **kw: {"steps": steps, "inputs": ["e.warc.gz"]})
    monkeypatch.setattr(cli, "format_funnel", lambda doc: "funnel")
    rc, out, err = run_cli(["build", "--input", "e.warc.gz", "--out", str(tmp_path / "o")], capsys)
    assert rc == 1
    assert "the corpus is empty" in err and "read nothing" in err and "1 input part" in err
    # it named OUT/shards, a folder an empty run never makes
    assert "shards: none written (0 samples)" in out and str(tmp_path / "o" / "shards") not in out
    assert "where everything was dropped" not in err
    steps[0].update({"in": 5, "kept": 0, "dropped": {"read_bad_record": 5}})
    rc, _, err = run_cli(["build", "--input", "e.warc.gz", "--out", str(tmp_path / "o")], capsys)
    assert rc == 1 and "where everything was dropped" in err


def test_the_retry_hint_names_the_network_failures_counted(tmp_path, monkeypatch, capsys):
    """The hint listed "refused connections, timeouts, 5xx, 429, robots.txt unreachable" for a
    run whose images all failed on DNS (a machine without internet): it now names the
    reasons counted, and only the ones --retry-failed fetches again."""
    steps = [{"name": "read", "in": 1, "kept": 1, "out": 1, "dropped": {}},
             {"name": "fetch", "in": 9, "kept": 0, "out": 0,
              "dropped": {"fetch_dns_error": 5, "fetch_timeout": 2, "fetch_http_404": 2}},
             {"name": "write", "in": 0, "kept": 0, "out": 0, "dropped": {}}]
    monkeypatch.setattr(cli, "build", lambda *a, **kw: {"steps": steps, "inputs": ["e.warc.gz"],
                                                        "retryable": {"fetch": 7}})
    monkeypatch.setattr(cli, "format_funnel", lambda doc: "funnel")
    rc, _, err = run_cli(["build", "--input", "e.warc.gz", "--out", str(tmp_path / "o")], capsys)
    assert rc == 1
    hint = next(ln for ln in err.splitlines() if "--retry-failed" in ln)
    assert "7 candidates" in hint and "fetch_dns_error: 5, fetch_timeout: 2" in hint
    assert "http_404" not in hint and "refused connections" not in hint
    # after --retry-failed, "run the same command with --retry-failed" was the command just run
    rc, _, err = run_cli(["build", "--input", "e.warc.gz", "--out", str(tmp_path / "o"),
                          "--retry-failed"], capsys)
    hint = next(ln for ln in err.splitlines() if "network failures" in ln)
    assert "failed again" in hint and "run the same command with" not in hint


@pytest.mark.parametrize("command", ["stats", "report"])
@pytest.mark.parametrize("text", ['{"steps": [', "[1, 2]", '{"steps": [{"name": "read"}]}', "\xff"])
def test_stats_and_report_of_a_damaged_stats_json_are_one_line(tmp_path, capsys, command, text):
    # a stats.json cut short (a full disk), edited by hand or another tool's: it was a
    # JSONDecodeError / KeyError traceback, exit 1
    (tmp_path / "stats.json").write_bytes(text.encode("latin-1"))
    rc, _, err = run_cli([command, str(tmp_path)], capsys)
    assert rc == 2 and err.startswith(f"lait: {command}: {tmp_path / 'stats.json'}: not a stats.json")
    assert len(err.strip().splitlines()) == 1
