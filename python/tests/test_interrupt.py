"""Ctrl-C from Python: SIGINT during a run stops it as on the command line (its folder says
"interrupted"), raises KeyboardInterrupt with pacer's message, and leaves the interpreter as it
was (its own SIGINT handler back, the next call runs normally). SIGTERM stops the run the same
way, then ends the process as SIGTERM would have.

No verdict depends on timing: the runs are endless (max_steps far beyond what can run in the
test), and the signal is sent once the run's folder shows it running, so it always lands inside
the call; a missing folder ends the test with a failure after a minute, not a hang."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import pacer

ENDLESS = {"max_steps": 10**9, "eval_every": 0, "target.stop": False}


def wait_until_running(summary: pathlib.Path, timeout_s: float = 60) -> bool:
    """Polls `summary` (a run's summary.json) until it says "running"."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if json.loads(summary.read_text())["status"] == "running":
                return True
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    return False


def signal_when_running(summary: pathlib.Path, signum=signal.SIGINT):
    """A started thread that sends `signum` to this process once `summary` says "running". Its
    `sent` attribute says whether it did (after join)."""
    def body():
        thread.sent = wait_until_running(summary)
        os.kill(os.getpid(), signum if thread.sent else signal.SIGINT)  # never leave a hang
    thread = threading.Thread(target=body, daemon=True)
    thread.sent = False
    thread.start()
    return thread


def test_ctrl_c_stops_a_run_and_the_interpreter_goes_on(tiny, tmp_path):
    out = tmp_path / "endless"
    sender = signal_when_running(out / "summary.json")
    with pytest.raises(KeyboardInterrupt) as raised:
        pacer.run(tiny, set=ENDLESS, out=out)
    sender.join()
    assert sender.sent
    assert "interrupted (SIGINT)" in str(raised.value) and str(out) in str(raised.value)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] < 10**9  # 0 or more
    # The interpreter's handler is back, and pacer runs again.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    again = pacer.run(tiny, out=tmp_path / "again")
    assert again.status in ("target_reached", "max_steps")


def test_ctrl_c_stops_a_comparison_keeping_the_runs_it_completed(tiny, tmp_path):
    # DGD stops at its target (loss 0.5, reached within a few hundred updates), PGC-CR never.
    out = tmp_path / "compare"
    sender = signal_when_running(out / "pgc-cr:s=1" / "seed1" / "summary.json")
    with pytest.raises(KeyboardInterrupt) as raised:
        pacer.compare(tiny, methods=["dgd:target.stop=true", "pgc-cr:s=1"], set=ENDLESS, out=out)
    sender.join()
    assert sender.sent
    assert "SIGINT" in str(raised.value)
    done = json.loads((out / "dgd:target.stop=true" / "seed1" / "summary.json").read_text())
    assert done["status"] == "target_reached"
    cut = json.loads((out / "pgc-cr:s=1" / "seed1" / "summary.json").read_text())
    assert cut["status"] == "interrupted"
    assert not (out / "compare.csv").exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_programs_own_sigint_handler_is_called_once(tiny, tmp_path):
    calls = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    try:
        out = tmp_path / "endless"
        sender = signal_when_running(out / "summary.json")
        with pytest.raises(KeyboardInterrupt, match="interrupted"):
            pacer.run(tiny, set=ENDLESS, out=out)  # cut short: raised although handled
        sender.join()
        assert calls == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigterm_stops_the_run_then_ends_the_process(tiny, tmp_path):
    out = tmp_path / "endless"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import pacer, signal
        from test_interrupt import ENDLESS, signal_when_running
        import pathlib
        out = pathlib.Path({str(out)!r})
        signal_when_running(out / "summary.json", signal.SIGTERM)
        pacer.run({tiny!r}, set=ENDLESS, out=out)
        print("still alive")
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=300, check=False)
    assert child.returncode == -signal.SIGTERM, child.stderr
    assert "still alive" not in child.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted"
