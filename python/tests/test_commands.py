"""pacer.run, compare, sweep, advise and fit: their frames and dicts hold the folder the command
wrote, which is the folder the pacer program writes for the same command; configs given as a
file, a nested dict or dotted keys, edited with set= and unset=, are the same configuration."""

import json

import pandas as pd
import pytest

import pacer

LOG_COLUMNS = ["time", "step", "work_units", "loss", "grad_norm", "responders", "staleness",
               "stepsize"]


def test_run_returns_the_log_the_evaluations_and_the_summary(tiny, tmp_path):
    r = pacer.run(tiny, set={"target.stop": False}, out=tmp_path / "run")
    assert isinstance(r.log, pd.DataFrame) and isinstance(r.evals, pd.DataFrame)
    assert r.log.columns[:len(LOG_COLUMNS)].tolist() == LOG_COLUMNS
    assert r.log["step"].tolist() == list(range(1, 31))  # one row per update
    assert r.evals["step"].tolist() == [10, 20, 30]      # eval_every = 10
    assert "full_loss" in r.evals.columns
    assert r.status == r.summary["status"] == "max_steps"
    assert r.summary["steps"] == 30 and r.summary["method"] == "dgd"
    assert r.summary == json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "max_steps = 30" in r.config
    assert r.out == (tmp_path / "run").resolve()


def test_a_file_a_nested_dict_and_dotted_keys_are_the_same_config(tiny, tiny_file, tmp_path):
    edits = {"method.name": "pgc-cr", "method": {"s": 1}, "max_steps": 12}
    from_file = pacer.run(tiny_file, set=edits, out=tmp_path / "file")
    nested = dict(tiny, max_steps=12, method={"name": "pgc-cr", "s": 1})
    from_dict = pacer.run(nested, out=tmp_path / "dict")
    dotted = {"workers": 4, "seed": 1, "max_steps": 12, "eval_every": 10,
              "method.name": "pgc-cr", "method.s": 1, "optimizer.lr": 0.05,
              "target.loss": 0.5, "model.name": "least_squares",
              "data": {"source": "synthetic", "generator": "least_squares", "samples": 200,
                       "features": 4},
              "timing.model": "random_stragglers", "timing.tau": 1.0, "timing.q": 0.2,
              "timing.delay_mean": 1.0}
    from_dotted = pacer.run(dotted, out=tmp_path / "dotted")
    assert from_file.summary["method"] == "pgc-cr"
    assert len(from_file.log) > 0
    # Deterministic simulator: the same configuration gives the same log, bit for bit.
    pd.testing.assert_frame_equal(from_file.log, from_dict.log, check_exact=True)
    pd.testing.assert_frame_equal(from_file.log, from_dotted.log, check_exact=True)


def test_unset_restores_a_default_and_set_writes_strings_as_strings(tiny, tmp_path):
    r = pacer.run(tiny, set={"method.name": "gc-cr", "method.s": 1}, unset=["eval_every"],
                  out=tmp_path / "r")
    assert r.summary["method"] == "gc-cr"
    assert "eval_every = 10" not in r.config
    # A str is a TOML string even where it reads as a number: "0.05" is no stepsize.
    with pytest.raises(pacer.Error, match="optimizer.lr"):
        pacer.run(tiny, set={"optimizer.lr": "0.05"}, out=tmp_path / "s")


def test_a_dict_config_without_out_writes_a_fresh_temporary_folder(tiny):
    a = pacer.run(tiny)
    b = pacer.run(tiny)
    assert a.out != b.out and a.out.is_dir() and b.out.is_dir()
    pd.testing.assert_frame_equal(a.log, b.log, check_exact=True)


def test_compare_gives_the_programs_table_runs_and_report(tiny_file, tmp_path, pacer_program):
    methods = ["dgd", "pgc-cr:s=1"]
    c = pacer.compare(tiny_file, methods=methods, seeds=2, set={"max_steps": 60},
                      out=tmp_path / "py")
    assert c.table["method"].tolist() == methods
    for column in ["runs", "reached", "verdict", "time_to_target_mean", "final_loss_mean",
                   "step_time_mean"]:
        assert column in c.table.columns
    assert sorted(zip(c.runs["method"], c.runs["seed"])) == [
        ("dgd", 1), ("dgd", 2), ("pgc-cr:s=1", 1), ("pgc-cr:s=1", 2)]
    assert "| method |" in c.markdown and "pgc-cr:s=1" in c.report
    assert c.against is None
    second = c.run("pgc-cr:s=1", seed=2)
    assert second.summary["seed"] == 2 and len(second.log) > 0
    with pytest.raises(KeyError, match="asgd"):
        c.run("asgd")
    program = pacer_program("compare", tiny_file, "--methods", ",".join(methods), "--seeds", 2,
                            "--set", "max_steps=60", "--out", tmp_path / "cli")
    assert program.returncode == 0, program.stderr
    for name in ["compare.csv", "runs.csv", "compare.md"]:
        assert (tmp_path / "py" / name).read_text() == (tmp_path / "cli" / name).read_text()


def test_compare_with_a_baseline_reads_against_csv(tiny, tmp_path):
    c = pacer.compare(tiny, methods="dgd,pgc-cr:s=1", seeds=2, baseline="dgd",
                      out=tmp_path / "c")
    assert isinstance(c.against, pd.DataFrame) and len(c.against) > 0


def test_sweep_gives_the_programs_sweep_csv(tiny_file, tmp_path, pacer_program):
    s = pacer.sweep(tiny_file, ["dgd", "pgc-cr:s=1"], grid={"timing.q": [0.05, 0.5]},
                    out=tmp_path / "py")
    assert s.table["cell"].tolist() == [0, 0, 1, 1]
    assert s.table["method"].tolist() == ["dgd", "pgc-cr:s=1"] * 2
    assert "rank" in s.table.columns
    assert s.cell(1).table["method"].tolist() == ["dgd", "pgc-cr:s=1"]
    program = pacer_program("sweep", tiny_file, "--methods", "dgd,pgc-cr:s=1", "--grid",
                            "timing.q=0.05,0.5", "--jobs", 1, "--out", tmp_path / "cli")
    assert program.returncode == 0, program.stderr
    assert (tmp_path / "py" / "sweep.csv").read_text() == \
        (tmp_path / "cli" / "sweep.csv").read_text()


def slow_worker_trace():
    """Worker 3 takes 10 s per unit, the others 1 s with one job in five at 3 s."""
    rows = [(w, 10.0 if w == 3 else (3.0 if j % 5 == 0 else 1.0))
            for j in range(40) for w in range(4)]
    return pd.DataFrame(rows, columns=["worker", "duration"])


def test_advise_ranks_methods_on_a_trace_given_as_a_dataframe(tmp_path):
    # Full-batch least squares whose target every method reaches (as the program's advise test).
    config = {"workers": 4, "max_steps": 400, "eval_every": 0,
              "data": {"source": "synthetic", "generator": "least_squares", "samples": 200,
                       "features": 5},
              "model": {"name": "least_squares"}, "training": {"batch": 0},
              "optimizer": {"lr": 0.05}, "target": {"loss": 0.3}, "method": {"name": "dgd"}}
    a = pacer.advise(config, slow_worker_trace(), methods=["dgd", "pgc-fr:s=1"], seeds=3,
                     tune="none", out=tmp_path / "advice")
    assert sorted(a.table["method"]) == ["dgd", "pgc-fr:s=1"]
    assert sorted(a.scenarios) == ["frequent", "measured", "slower"]
    assert "ranking on the measured trace" in a.text
    assert a.report.startswith("#")
    # DGD waits for worker 3 (10x slower) at every step; PGC-FR with s = 1 never does.
    assert a.table.set_index("method")["verdict"]["pgc-fr:s=1"] == "best"
    assert "recommended: pgc-fr:s=1" in a.text


def test_fit_gives_the_programs_fit_csv(tmp_path, pacer_program):
    trace = slow_worker_trace()
    f = pacer.fit(trace, out=tmp_path / "py")
    for column in ["scope", "worker", "model", "aic", "rank", "ks"]:
        assert column in f.table.columns
    assert "[timing]" in f.text and f.report.startswith("#")
    trace.to_csv(tmp_path / "trace.csv", index=False)
    program = pacer_program("fit", tmp_path / "trace.csv", "--out", tmp_path / "cli")
    assert program.returncode == 0, program.stderr
    assert (tmp_path / "py" / "fit.csv").read_text() == (tmp_path / "cli" / "fit.csv").read_text()


def error_line(program):
    """The message of the program's "pacer: error: ..." line."""
    lines = [ln for ln in program.stderr.splitlines() if ln.startswith("pacer: error: ")]
    assert len(lines) == 1, program.stderr
    return lines[0][len("pacer: error: "):]


def test_errors_raise_pacer_error_with_the_programs_message(tiny_file, tmp_path, pacer_program):
    assert issubclass(pacer.Error, Exception)
    out = tmp_path / "out"  # every case fails before anything is written
    cases = [
        (lambda: pacer.run(tiny_file, set={"data.max_trian": 5}, out=out),
         ["run", tiny_file, "--set", "data.max_trian=5", "--out", out]),
        (lambda: pacer.run(tmp_path / "none.toml", out=out),
         ["run", tmp_path / "none.toml", "--out", out]),
        (lambda: pacer.compare(tiny_file, methods="dgd,nosuch", out=out),
         ["compare", tiny_file, "--methods", "dgd,nosuch", "--out", out]),
        (lambda: pacer.run(tiny_file, set={"optimizer.lr": "fast"}, out=out),
         ["run", tiny_file, "--set", 'optimizer.lr="fast"', "--out", out]),
    ]
    for call, args in cases:
        with pytest.raises(pacer.Error) as raised:
            call()
        message = str(raised.value)
        assert "\n" not in message
        program = pacer_program(*args)
        assert program.returncode == 1
        assert message == error_line(program)


def test_a_diverged_run_is_an_error_as_in_the_program(tiny, tmp_path):
    with pytest.raises(pacer.Error, match="diverged"):
        pacer.run(tiny, set={"optimizer.lr": 50.0, "max_steps": 300}, out=tmp_path / "d")
    summary = json.loads((tmp_path / "d" / "summary.json").read_text())
    assert summary["status"] == "diverged"


def test_a_dict_error_names_the_key_and_the_dict(tiny, tmp_path):
    with pytest.raises(pacer.Error, match="max_stepz") as raised:
        pacer.run(dict(tiny, max_stepz=3), out=tmp_path / "r")
    assert "config dict" in str(raised.value)
    with pytest.raises(TypeError, match="workers"):
        pacer.run(dict(tiny, workers=object()), out=tmp_path / "r")
    # MPI needs mpirun and the program: refused before MPI starts in the interpreter.
    with pytest.raises(pacer.Error, match="engine.name"):
        pacer.run(tiny, set={"engine.name": "mpi"}, out=tmp_path / "m")
    with pytest.raises(pacer.Error, match="engine.name"):
        pacer.sweep(tiny, "dgd", {"timing.q": [0.1]}, set={"engine.name": "mpi"},
                    out=tmp_path / "s")
