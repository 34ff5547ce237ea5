"""pacer from Python: the commands of the `pacer` program, run in this process.

Each function runs one command of the command-line program (README, "Using pacer") through the
extension module `_pacer`, which calls the same C++ functions: the command writes its output
folder exactly as ``pacer <command> --out DIR`` does, and the function returns an object that
holds that folder's tables as pandas DataFrames and its summary.json as a dict.

A configuration is a TOML file's path or a dict (nested like the TOML file, or with dotted keys:
``{"method": {"name": "dgd"}}`` or ``{"method.name": "dgd"}``). ``set={key: value}`` and
``unset=[key]`` edit it as ``--set`` and ``--unset`` do (the sets first, then the unsets).
``out`` is the output folder; by default the program's (``runs/<config name>``, relative to the
working directory) for a config file, and a fresh temporary folder for a dict.

pacer's errors raise :class:`pacer.Error` with the one-line message the program prints after
``pacer: error:``. Ctrl-C (SIGINT) stops a run as on the command line: the run ends where it is,
writes its outputs with status "interrupted", and KeyboardInterrupt is raised. SIGTERM does the
same, then ends the process unless the program handles SIGTERM. See docs/python.md.
"""

import json
import numbers
import os
import pathlib
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

try:
    import pandas as pd
except ImportError as e:  # pragma: no cover - the package's one dependency
    raise ImportError(
        "the pacer package needs pandas (Debian: apt-get install python3-pandas)") from e

from . import _pacer

Error = _pacer.Error
Error.__module__ = __name__
Error.__doc__ = "An error pacer reports: one line naming the key or file and what was expected."

__version__ = _pacer.version
__all__ = ["Error", "run", "compare", "sweep", "advise", "fit", "set_log_level",
           "RunResult", "CompareResult", "SweepResult", "AdviseResult", "FitResult"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


# --- configurations -----------------------------------------------------------------------------

def _toml_key(key: str) -> str:
    """A dotted key with every part that is not a bare TOML key quoted."""
    return ".".join(p if _BARE_KEY.match(p) else json.dumps(p) for p in key.split("."))


def _toml_value(value: Any, key: str) -> str:
    """`value` written as a TOML value; `key` names it in a TypeError."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, (str, os.PathLike)):
        return json.dumps(os.fspath(value))  # JSON's escapes are TOML basic-string escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, key) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(str(k))} = {_toml_value(v, key)}"
                                for k, v in value.items()) + " }"
    raise TypeError(f"config key '{key}': cannot write a {type(value).__name__} as a TOML value "
                    "(expected a bool, number, string, list or dict)")


def _flatten(config: Dict[str, Any], prefix: str = "") -> List[tuple]:
    """(dotted key, value) for every value of a nested dict; a key may itself be dotted."""
    pairs = []
    for key, value in config.items():
        if not isinstance(key, str):
            raise TypeError(f"config key {key!r}: expected a string")
        dotted = prefix + key
        if isinstance(value, dict):
            pairs += _flatten(value, dotted + ".")
        else:
            pairs.append((dotted, value))
    return pairs


def _config_source(config, set, unset):
    """(path, TOML text, edits) for _pacer: a file's path, or the TOML text of a dict."""
    if isinstance(config, dict):
        path, text = "", "".join(f"{_toml_key(k)} = {_toml_value(v, k)}\n"
                                 for k, v in _flatten(config))
    elif isinstance(config, (str, os.PathLike)):
        path, text = os.fspath(config), ""
    else:
        raise TypeError(f"config: expected a TOML file's path or a dict, got "
                        f"{type(config).__name__}")
    edits = []
    if set is not None:
        if not isinstance(set, dict):
            raise TypeError("set: expected a dict {key: value}")
        edits += [("set", f"{k}={_toml_value(v, k)}") for k, v in _flatten(set)]
    if unset is not None:
        edits += [("unset", k) for k in ([unset] if isinstance(unset, str) else unset)]
    return path, text, edits


def _out_dir(out, config, command: str, suffix: str = "") -> str:
    """The output folder: `out`, else the program's default for a config file
    (runs/<stem><suffix>), else a fresh temporary folder (a dict has no name)."""
    if out is not None:
        return os.fspath(out)
    if isinstance(config, dict):
        return tempfile.mkdtemp(prefix=f"pacer-{command}-")
    return "runs/" + pathlib.Path(os.fspath(config)).stem + suffix


def _method_list(methods) -> str:
    if isinstance(methods, str):
        return methods
    return ",".join(methods)


def _trace_path(trace, folder: str) -> str:
    """A trace's path; a DataFrame (columns worker, duration[, step, units]) is written to
    <folder>/input-trace.csv first."""
    if isinstance(trace, pd.DataFrame):
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "input-trace.csv")
        trace.to_csv(path, index=False)
        return path
    return os.fspath(trace)


# --- reading a command's folder -----------------------------------------------------------------

def _csv(path: pathlib.Path) -> Optional[pd.DataFrame]:
    return pd.read_csv(path) if path.exists() else None


def _text(path: pathlib.Path) -> Optional[str]:
    return path.read_text() if path.exists() else None


@dataclass(repr=False)
class RunResult:
    """One run's folder (``pacer run``): log.csv, evals.csv, summary.json, config.toml."""
    out: pathlib.Path      # the run's folder
    status: str            # summary["status"]: "target_reached", "max_steps", ...
    summary: Dict[str, Any]  # summary.json
    log: pd.DataFrame      # log.csv: one row per update
    evals: pd.DataFrame    # evals.csv: one row per evaluation (F, ||grad F||^2, test accuracy)
    config: str            # config.toml: the resolved configuration the run used
    jobs: Optional[pd.DataFrame] = None  # jobs.csv, when record.jobs is on

    @classmethod
    def read(cls, folder) -> "RunResult":
        """The run in `folder` (any run's folder, a comparison's included)."""
        d = pathlib.Path(folder).resolve()
        summary = json.loads((d / "summary.json").read_text())
        return cls(out=d, status=summary.get("status", ""), summary=summary,
                   log=pd.read_csv(d / "log.csv"), evals=pd.read_csv(d / "evals.csv"),
                   config=(d / "config.toml").read_text(), jobs=_csv(d / "jobs.csv"))

    def __repr__(self):
        return (f"<pacer.RunResult {self.summary.get('method')} {self.status} after "
                f"{len(self.log)} updates; {self.out}>")


@dataclass(repr=False)
class CompareResult:
    """A comparison's folder (``pacer compare``)."""
    out: pathlib.Path         # the comparison's folder
    table: pd.DataFrame       # compare.csv: one row per method
    runs: pd.DataFrame        # runs.csv: one row per method and seed (its folder included)
    report: str               # report.md
    markdown: str             # the table as the program prints it, with its legend and verdict
    against: Optional[pd.DataFrame] = None  # against.csv, when a baseline is named

    @classmethod
    def read(cls, folder, markdown: str = "") -> "CompareResult":
        d = pathlib.Path(folder).resolve()
        return cls(out=d, table=pd.read_csv(d / "compare.csv"), runs=pd.read_csv(d / "runs.csv"),
                   report=(d / "report.md").read_text(),
                   markdown=markdown or (_text(d / "compare.md") or ""),
                   against=_csv(d / "against.csv"))

    def run(self, method: str, seed: Optional[int] = None) -> RunResult:
        """The run of `method` (a spec as given) for `seed` (default: the first seed)."""
        rows = self.runs[self.runs["method"] == method]
        if seed is not None:
            rows = rows[rows["seed"] == seed]
        if rows.empty:
            raise KeyError(f"no run of method {method!r}" +
                           (f" with seed {seed}" if seed is not None else "") +
                           f" in {self.out}/runs.csv (methods: "
                           f"{', '.join(self.runs['method'].unique())})")
        return RunResult.read(self.out / rows.iloc[0]["folder"])

    def __repr__(self):
        return f"<pacer.CompareResult {len(self.table)} methods; {self.out}>\n{self.markdown}"


@dataclass(repr=False)
class SweepResult:
    """A sweep's folder (``pacer sweep``)."""
    out: pathlib.Path     # the sweep's folder
    table: pd.DataFrame   # sweep.csv: one row per cell and method
    report: str           # report.md
    markdown: str         # the winners' table as the program prints it

    def cell(self, index: int) -> CompareResult:
        """Cell `index`'s comparison (<out>/cells/<index>)."""
        return CompareResult.read(self.out / "cells" / str(index))

    def __repr__(self):
        return f"<pacer.SweepResult {self.table['cell'].nunique()} cells; {self.out}>"


@dataclass(repr=False)
class AdviseResult:
    """An advice's folder (``pacer advise``)."""
    out: pathlib.Path    # the advice folder
    text: str            # the answer as the program prints it
    report: str          # report.md
    table: pd.DataFrame  # the comparison on the trace as measured (measured/compare.csv)
    # Each scenario's comparison by its folder: "measured", "slower" (stragglers twice as slow),
    # "frequent" (stragglers twice as frequent).
    scenarios: Dict[str, CompareResult] = field(default_factory=dict)

    def __repr__(self):
        return f"<pacer.AdviseResult {self.out}>\n{self.text}"


@dataclass(repr=False)
class FitResult:
    """A fit's folder (``pacer fit``)."""
    out: pathlib.Path    # the fit's folder
    text: str            # the summary as the program prints it
    table: pd.DataFrame  # fit.csv: one row per fit
    report: str          # fit.md

    def __repr__(self):
        return f"<pacer.FitResult {self.out}>\n{self.text}"


# --- the commands -------------------------------------------------------------------------------

def run(config, *, set=None, unset=None, out=None) -> RunResult:
    """``pacer run CONFIG``: trains with the config's method; returns the run's folder read back.

    A diverged run (or one that lost too many workers) raises pacer.Error, as the program exits
    with an error; its outputs are written all the same."""
    path, text, edits = _config_source(config, set, unset)
    folder = _out_dir(out, config, "run")
    _pacer.run(path, text, edits, folder)
    return RunResult.read(folder)


def compare(config, methods, *, seeds=1, budget=None, tune=None, tune_seeds=2, baseline=None,
            set=None, unset=None, out=None) -> CompareResult:
    """``pacer compare CONFIG --methods ...``: every method on the same data, timing and seeds.

    `methods`: specs as a list or a comma-separated string ("dgd", "is-sgd:k=2", ...);
    `budget`: "time=T", "work=W" or "steps=S"; `tune`: "KEY=v1,v2,..." chosen on `tune_seeds`
    seeds after the reported ones; `baseline`: a spec of `methods` (against.csv)."""
    path, text, edits = _config_source(config, set, unset)
    folder = _out_dir(out, config, "compare")
    markdown = _pacer.compare(path, text, edits, _method_list(methods), int(seeds), budget or "",
                              tune or "", int(tune_seeds), baseline or "", folder)
    return CompareResult.read(folder, markdown)


def _grid_list(grid) -> List[str]:
    """--grid arguments from {key: [values]} (first key slowest), a "KEY=v1,v2" string or a list
    of them. A string value is written as the command line writes it (bare)."""
    if isinstance(grid, str):
        return [grid]
    if isinstance(grid, dict):
        return [f"{k}=" + ",".join(v if isinstance(v, str) else _toml_value(v, k) for v in values)
                for k, values in grid.items()]
    return list(grid)


def sweep(config, methods, grid, *, seeds=1, budget=None, tune=None, tune_seeds=2,
          baseline=None, set=None, unset=None, out=None) -> SweepResult:
    """``pacer sweep CONFIG --methods ... --grid ...``: the comparison in every cell of the grid.

    `grid`: {key: [values]} (up to three keys, the first varying slowest) or "KEY=v1,v2,..."
    strings. The cells run one after another in this process (the program runs them side by
    side as processes); each is deterministic, so the outputs are the same."""
    path, text, edits = _config_source(config, set, unset)
    folder = _out_dir(out, config, "sweep", "-sweep")
    name = "config" if isinstance(config, dict) else pathlib.Path(os.fspath(config)).stem
    markdown = _pacer.sweep(path, text, edits, _grid_list(grid), _method_list(methods),
                            int(seeds), budget or "", tune or "", int(tune_seeds), baseline or "",
                            folder, name)
    d = pathlib.Path(folder).resolve()
    return SweepResult(out=d, table=pd.read_csv(d / "sweep.csv"),
                       report=(d / "report.md").read_text(), markdown=markdown)


def advise(config, trace, *, seeds=5, budget=None, budget_multiple=3.0, tune=None,
           tune_seeds=2, max_seeds=30, methods=None, s=(1, 2, 3), set=None, unset=None,
           out=None) -> AdviseResult:
    """``pacer advise CONFIG --trace TRACE``: every applicable method replayed on a measured
    trace, ranked, with a recommendation.

    `trace`: a "worker,duration" CSV, a run's jobs.csv, or a DataFrame with those columns;
    `tune`: "KEY=v1,v2,..." or "none" (default: optimizer.lr at lr/3, lr, 3 lr); `methods`:
    specs (default every applicable method with each `s`)."""
    path, text, edits = _config_source(config, set, unset)
    folder = _out_dir(out, config, "advise", "-advise")
    options = _pacer.AdviseOptions()
    options.trace = _trace_path(trace, folder)
    options.seeds, options.budget = int(seeds), budget or ""
    options.budget_multiple, options.tune = float(budget_multiple), tune or ""
    options.tuning_seeds, options.max_seeds = int(tune_seeds), int(max_seeds)
    options.methods = "" if methods is None else _method_list(methods)
    options.s_values, options.out_dir = [int(v) for v in s], folder
    text_out = _pacer.advise(path, text, edits, options)
    d = pathlib.Path(folder).resolve()
    scenarios = {name: CompareResult.read(d / name)
                 for name in ("measured", "slower", "frequent") if (d / name).is_dir()}
    return AdviseResult(out=d, text=text_out, report=(d / "report.md").read_text(),
                        table=scenarios["measured"].table, scenarios=scenarios)


def fit(trace, *, out=None) -> FitResult:
    """``pacer fit TRACE``: the timing models fitted to a measured trace, ranked.

    `trace`: a "worker,duration[,step][,units]" CSV or a DataFrame with those columns."""
    if out is None:
        out = (tempfile.mkdtemp(prefix="pacer-fit-") if isinstance(trace, pd.DataFrame)
               else "runs/fit-" + pathlib.Path(os.fspath(trace)).stem)
    folder = os.fspath(out)
    text_out = _pacer.fit(_trace_path(trace, folder), folder)
    d = pathlib.Path(folder).resolve()
    return FitResult(out=d, text=text_out, table=pd.read_csv(d / "fit.csv"),
                     report=(d / "fit.md").read_text())


def set_log_level(level: str) -> None:
    """pacer's messages on stderr: "debug", "info" (default), "warning" (the program's --quiet)
    or "error"."""
    _pacer.set_log_level(level)
