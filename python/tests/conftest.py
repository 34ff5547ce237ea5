"""Fixtures of the pacer package's tests: a tiny configuration (least squares on 200 synthetic
rows, 4 workers, 30 updates: each run takes milliseconds) as a dict and as a TOML file, and the
pacer program (PACER_BINARY, set by CTest) to hold the package's outputs against."""

import copy
import os
import pathlib
import subprocess

import pytest

TINY = {
    "workers": 4,
    "seed": 1,
    "max_steps": 30,
    "eval_every": 10,
    "data": {"source": "synthetic", "generator": "least_squares", "samples": 200,
             "features": 4},
    "model": {"name": "least_squares"},
    "optimizer": {"lr": 0.05},
    "method": {"name": "dgd"},
    "timing": {"model": "random_stragglers", "tau": 1.0, "q": 0.2, "delay_mean": 1.0},
    "target": {"loss": 0.5},
}

# TINY as a user would write the file (written by hand, not by the package under test).
TINY_TOML = """workers = 4
seed = 1
max_steps = 30
eval_every = 10
[data]
source = "synthetic"
generator = "least_squares"
samples = 200
features = 4
[model]
name = "least_squares"
[optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "random_stragglers"
tau = 1.0
q = 0.2
delay_mean = 1.0
[target]
loss = 0.5
"""


@pytest.fixture
def tiny():
    return copy.deepcopy(TINY)


@pytest.fixture
def tiny_file(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML)
    return path


@pytest.fixture
def pacer_program():
    """Runs the pacer program with the given arguments; returns the CompletedProcess."""
    binary = os.environ.get("PACER_BINARY",
                            str(pathlib.Path(__file__).parents[2] / "build" / "pacer"))
    if not os.path.exists(binary):
        pytest.fail(f"the pacer program is not at {binary} (set PACER_BINARY)")

    def run(*args):
        return subprocess.run([binary, "-q", *map(str, args)], capture_output=True, text=True,
                              check=False)
    return run
