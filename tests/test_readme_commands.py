"""Every command in the README's ``bash`` code blocks runs as written on a fresh clone.

The commands are read from README.md itself, so a command anyone adds is covered without
touching this file. They run in README order, in one copy of the repository (the files git
tracks plus the untracked ones it does not ignore: what a fresh clone has once they are
committed), so a command may use what an earlier one wrote (``--trace out/`` then ``plot out/``).
Each must exit with status 0 and print no traceback.

Fast commands run by default; the commands in :data:`SLOW` are marked ``slow``; the commands in
:data:`NOT_RUN` are not run, each for the reason given. A command that takes longer than
:data:`FAST_TIMEOUT_SECONDS` in the default run fails with a message saying so: add it to
:data:`SLOW`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FAST_TIMEOUT_SECONDS = 240
SLOW_TIMEOUT_SECONDS = 3600

# Commands (matched by their start) that are not run, and why.
NOT_RUN = {
    # Needs the package index (no network in tests); .ci/run runs this line verbatim on every
    # submission, so it is checked there.
    "python3 -m venv .venv": "the install line: needs the network; .ci/run runs it verbatim",
    # The test suite itself: running it from a test would recurse.
    "python -m pytest": "the test suite itself",
    # A Dask cluster's scheduler at a host of your own: tests have no network and no cluster
    # (local workers and a LocalCluster are exercised by tests/test_search_*.py and bench --search).
    "accelsim search --hw eyeriss_like --mapping examples/conv2_1_b.m --mapper exhaustive": "needs a Dask scheduler",
    # "..." stands for the options of the search that was interrupted.
    "accelsim search ... --out s/ --resume": "a placeholder for an interrupted search's own options",
    # Measurements that take 10-20 minutes each on CI's 2 cores (the slow pass would pass 45
    # minutes with them); the same code runs on small cases in tests/test_search_reuse.py
    # (the pruning's loss report on a small layer) and tests/test_multicore.py (MAGMA against
    # the heuristics, simulated, and the S2 preset).
    "python -m accelsim.search.reuse_report": "an exhaustive search of a dmazerunner6 layer twice: 10-20 minutes",
    "accelsim multicore --system magma_s2 --workload mix": "100 jobs on four contending sub-accelerators, schedules "
                                                           "simulated: about 10 minutes",
}

# Commands (matched by their start) marked slow: they run in CI's slow pass, not by default.
SLOW = {
    "accelsim bench --quick": "ten ResNet-50 layers simulated",
    "accelsim validate": "the papers' scenario sets: minutes",
    "python -m accelsim.validation.marvel_readings": "MARVEL's off-chip optimizer on 15 layers under 12 readings",
    "python -m accelsim.scalesim.parity": "runs the real SCALE-Sim on 48 layers",
    "accelsim simulate --hw flash_edge --network vgg16": "all of VGG-16 simulated",
    "accelsim search --hw eyeriss_like --network marvel15 --mapper gamma": "2,000 schedules for each of 15 layers",
    "accelsim search --hw eyeriss_like --network marvel15 --mapper marvel": "MARVEL's mapper on 15 layers, the best "
                                                                           "re-ranked by simulation: minutes",
    "accelsim bench --search": "search throughput with local and Dask workers",
    "mkdir -p cmp; for m in gamma ng-ga": "eight mappers' searches of one layer",
    "accelsim bench --against-scalesim": "the real SCALE-Sim on AlexNet conv2: about a minute",
    "accelsim simulate --hw interstellar_rf2 --network alexnet --style eyeriss_like --layer conv3 --functional":
        "149,520,384 MACs with values: about a minute",
}

# Commands (matched by their start) whose documented exit status is not 0, and that status.
EXIT_STATUS = {
    "accelsim lint": 1,  # lint exits 1 when it finds something (README, The MAESTRO model); the examples have findings
}

# A command that reads what an earlier command wrote: (its start, the start of the earlier one).
NEEDS = {
    "accelsim plot out/": "accelsim simulate --hw eyeriss_like --network marvel15 --style nvdla_like --layer "
                          "L13_CONV5_1_3 --trace out/",
    "accelsim simulate --hw eyeriss_like --network resnet_block.yaml": "accelsim import-onnx",
    "accelsim simulate --hw eyeriss_like --mapping resnet18_rs.m": "accelsim mapping  --hw eyeriss_like --network resnet18",
    "accelsim simulate --hw eyeriss_like --mapping l5.yaml": "accelsim mapping  --hw eyeriss_like --network marvel15",
}


@dataclass(frozen=True)
class Command:
    """One README command: its text (comment stripped) and the line it is on."""

    text: str
    line: int

    @property
    def id(self) -> str:
        return f"L{self.line}:" + re.sub(r"\s+", " ", self.text)[:90]


def _strip_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` after whitespace, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def readme_commands(text: str) -> list[Command]:
    """The commands of every ```bash block, one per non-empty line, in README order."""
    commands = []
    for block in re.finditer(r"^```bash\n(.*?)^```", text, flags=re.M | re.S):
        first = text.count("\n", 0, block.start(1)) + 1
        for offset, raw in enumerate(block.group(1).splitlines()):
            command = _strip_comment(raw)
            if command:
                commands.append(Command(command, first + offset))
    return commands


def _matches(command: Command, starts: dict[str, str]) -> str | None:
    return next((reason for start, reason in starts.items() if (command.text + "\n").startswith(start)), None)


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def _params() -> list:
    return [pytest.param(command, id=command.id, marks=[pytest.mark.slow] if _matches(command, SLOW) else [])
            for command in COMMANDS if not _matches(command, NOT_RUN)]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> dict:
    """A copy of the repository as a fresh clone would have it, and the commands run in it."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    target = tmp_path_factory.mktemp("clone")
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    return {"dir": target, "ran": set()}


def _run(command: Command, clone: dict, timeout: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(clone["dir"]))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    try:
        done = subprocess.run(["bash", "-c", command.text], cwd=clone["dir"], env=env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"README line {command.line}: `{command.text}` took more than {timeout} s"
                    + ("; add it to SLOW in tests/test_readme_commands.py" if timeout == FAST_TIMEOUT_SECONDS else ""))
    clone["ran"].add(command)
    return done


@pytest.mark.parametrize("command", _params())
def test_readme_command_runs(command: Command, clone: dict) -> None:
    timeout = SLOW_TIMEOUT_SECONDS if _matches(command, SLOW) else FAST_TIMEOUT_SECONDS
    need = _matches(command, NEEDS)
    if need is not None:
        earlier = [c for c in COMMANDS if c.text.startswith(need) and c.line < command.line]
        assert earlier, f"README line {command.line}: no earlier command starts with {need!r}"
        for prerequisite in earlier:
            if prerequisite not in clone["ran"]:
                _run(prerequisite, clone, SLOW_TIMEOUT_SECONDS)
    done = _run(command, clone, timeout)
    output = (done.stdout + done.stderr)[-3000:]
    expected = next((code for start, code in EXIT_STATUS.items() if command.text.startswith(start)), 0)
    assert done.returncode == expected, (f"README line {command.line}: `{command.text}` exited {done.returncode}, "
                                         f"not {expected}:\n{output}")
    assert "Traceback" not in done.stderr, output


def test_every_readme_command_is_accounted_for():
    """Each README command is run (fast or slow) or listed in NOT_RUN; the lists name only
    commands that exist, so they cannot go stale."""
    assert COMMANDS, "no ```bash blocks found in README.md"
    for table in (NOT_RUN, SLOW, NEEDS, EXIT_STATUS):
        for start in table:
            assert any((c.text + "\n").startswith(start) for c in COMMANDS), f"no README command starts with {start!r}"


def test_comment_stripping():
    assert _strip_comment("accelsim list   # presets") == "accelsim list"
    assert _strip_comment("echo 'a # b'  # c") == "echo 'a # b'"
    assert _strip_comment("accelsim plot out/#1") == "accelsim plot out/#1"


def test_files_the_readme_names_exist():
    """Every repository path the README mentions (examples/, validation/, traces/, tests/,
    accelsim/, hwconfigs/) is shipped."""
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"(?<![\w/.<-])((?:examples|validation|traces|hwconfigs|tests|accelsim)/[\w./-]*\w)", text))
    assert "examples/conv2_1_b.m" in named
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_mapping_example_is_the_shipped_file():
    """The MAESTRO mapping shown under Inputs is ``examples/conv2_1_b.m``, character for character
    (a README command runs it on the MAESTRO hardware file ``examples/maestro/eyeriss168.hw.m``)."""
    text = README.read_text(encoding="utf-8")
    shown = re.search(r"^### Mappings \(MAESTRO `\.m`\)\n\n```\n(.*?)^```", text, flags=re.M | re.S)
    assert shown is not None
    assert shown.group(1) == (ROOT / "examples" / "conv2_1_b.m").read_text(encoding="utf-8")
