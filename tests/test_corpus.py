"""Every case of the hostile corpus (``tests/hostile_inputs.py``: 200+ bad, hostile or huge
inputs across every input kind, CLI misuse and output paths) ends with its documented exit
status and one ``error:`` line naming the file and the line or field, never a traceback.

In the default run every case goes through the CLI in-process (about 20 s) and a handful of
the harshest in a subprocess; the slow run (``-m slow``) runs every case in its own process
under a 4 GiB address-space limit and checks that it ends within 30 s with a peak RSS under
1 GiB (about 4-8 minutes on the 2-core machine).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from accelsim.cli import main
from hostile_inputs import CASES, DIR, FIFO, SPARSE_65M, Case

ADDRESS_SPACE_BYTES = 4 * 2**30
MAX_RSS_BYTES = 2**30
TIME_LIMIT_SECONDS = 30
# run in a subprocess in the default run too: devices and pipes, recursion, alias bombs,
# huge numbers and layers, a billion PEs, a 200,000-character CSV field, a scheduler address
# whose failed client could print a traceback as it is collected
HARSH = ("m-device", "m-fifo", "m-deep-parentheses", "hw-alias-bomb", "net-alias-bomb", "hw-5000-digits",
         "hw-billion-pes", "topo-1e8-gemm", "m-too-large", "ln-alias-bomb-target", "csv-200000-char-field",
         "search-scheduler-ucx")


def materialize(case: Case, where: Path) -> list[str]:
    """Create the case's files in ``where``; its arguments with ``{d}`` replaced."""
    for name, content in case.files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == DIR:
            path.mkdir()
        elif content == FIFO:
            os.mkfifo(path)
        elif content == SPARSE_65M:
            with open(path, "wb") as f:
                f.truncate(65 * 2**20)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return [arg.replace("{d}", str(where)) for arg in case.args]


def check(case: Case, status: int, stderr: str, where: Path) -> None:
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    if case.status == 0:  # a huge or unusual input that runs: no error line at all
        assert status == 0 and not errors, stderr
        return
    assert len(errors) == 1, stderr
    assert status == case.status, stderr
    shown = stderr.replace(str(where), "{d}")  # so a needle cannot match the test's own directory name
    for needle in case.needles:
        assert needle in shown, (needle, stderr)


def test_corpus_size_and_kinds():
    """At least 150 cases, covering every input kind."""
    assert len(CASES) >= 150
    assert len({c.name for c in CASES}) == len(CASES)
    kinds = {c.name.split("-")[0] for c in CASES}
    assert kinds >= {"m", "hw", "mhw", "set", "net", "cfg", "topo", "csv", "cli", "out"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_in_process(case, tmp_path):
    result = CliRunner().invoke(main, materialize(case, tmp_path))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    check(case, result.exit_code, result.stderr, tmp_path)


def run_limited(case: Case, where: Path) -> tuple[int, str, float, int]:
    """(exit status, stderr, seconds, peak RSS in bytes) of the case in its own process under
    the address-space limit, killed after the time limit (we reap it ourselves with wait4 to
    read that child's own peak RSS)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))

    args = materialize(case, where)
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "accelsim.cli", *args], cwd=where, preexec_fn=limit,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(TIME_LIMIT_SECONDS, proc.kill)
    timer.start()
    try:
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        _, wait_status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    seconds = time.monotonic() - start
    assert seconds < TIME_LIMIT_SECONDS, f"{case.name}: killed after {TIME_LIMIT_SECONDS} s"
    return proc.returncode, stderr, seconds, usage.ru_maxrss * 1024


@pytest.mark.parametrize("case", [c for c in CASES if c.name in HARSH], ids=lambda c: c.name)
def test_harsh_case_in_a_subprocess(case, tmp_path):
    status, stderr, seconds, rss = run_limited(case, tmp_path)
    check(case, status, stderr, tmp_path)
    assert seconds < TIME_LIMIT_SECONDS and rss < MAX_RSS_BYTES, (seconds, rss)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_in_a_subprocess(case, tmp_path):
    status, stderr, seconds, rss = run_limited(case, tmp_path)
    check(case, status, stderr, tmp_path)
    assert seconds < TIME_LIMIT_SECONDS and rss < MAX_RSS_BYTES, (seconds, rss)
