"""Where candidates are scored: in this process, in local worker processes, or on a Dask cluster.

Every executor runs the same pure function (:func:`accelsim.search.models.screen_batch`: compile,
check, name and score a batch of candidates) on the same batches and returns their results in order, so results do not depend on the executor.
Local workers are spawned once per executor and ignore Ctrl-C (the parent handles it and
terminates them); a Dask cluster is reached by its scheduler address or a
``distributed.Client`` the caller already has (optional extra ``distributed``).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, Protocol

from accelsim.errors import InputError
from accelsim.mapping.ast import Directive
from accelsim.search.models import ModelTask, Screened, screen_batch

Batch = Sequence[Sequence[Directive]]
# the protocols of scheduler addresses accepted (others, e.g. ucx://, need packages of their own)
SCHEMES = ("tcp", "tls", "ws", "wss", "inproc")


class Executor(Protocol):
    """Scores batches of dataflows; ``workers``: how many run at once."""

    workers: int

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        """``screen_batch(task, batch)`` for every batch, results in order."""
        ...

    def close(self) -> None:
        """Stop the workers (at once: work in flight is dropped)."""
        ...


class InProcess:
    """Score in the calling process (no parallelism, no start-up cost)."""

    workers = 1

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        return [screen_batch(task, batch) for batch in batches]

    def close(self) -> None:
        pass


PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies (Linux)


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this worker when the process that started it dies (Linux; elsewhere
    nothing), and exit at once if that has already happened."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)


def _worker_start(parent: int) -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it terminates the workers), and the
    worker dies with the parent (killed, it cannot terminate them)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LocalProcesses:
    """``workers`` spawned worker processes of this machine (spawned, not forked: the parent may
    hold threads, e.g. a progress bar's)."""

    def __init__(self, workers: int):
        if workers < 1:
            raise InputError(f"--workers must be at least 1, got {workers}")
        self.workers = workers
        self._pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_worker_start,
                                                               initargs=(os.getpid(),))

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        return self._pool.starmap(screen_batch, [(task, batch) for batch in batches], chunksize=1)

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()


class DaskExecutor:
    """A Dask cluster: ``scheduler`` is a ``distributed.Client`` or a scheduler address such as
    ``tcp://host:8786``; ``workers`` is the cluster's worker thread count when connected."""

    def __init__(self, scheduler: Any):
        if isinstance(scheduler, str):
            scheme = scheduler.split("://", 1)[0] if "://" in scheduler else "tcp"
            if scheme not in SCHEMES:
                raise InputError(f"--scheduler {scheduler}: the protocol {scheme}:// is not one accelsim connects "
                                 f"with; give an address such as tcp://HOST:PORT (protocols: "
                                 f"{', '.join(SCHEMES)})")
        try:
            import distributed
        except ImportError:
            raise InputError("a Dask scheduler needs the distributed package: "
                             "pip install 'accelsim[distributed]'") from None
        if isinstance(scheduler, distributed.Client):
            self._client, self._owned = scheduler, False
        else:
            try:
                self._client = distributed.Client(scheduler, timeout="10s", set_as_default=False)
            except Exception as exc:  # noqa: BLE001 - whatever connecting raises, the address is the user's
                raise InputError(f"cannot reach the Dask scheduler {scheduler}: {type(exc).__name__}: {exc}") from None
            self._owned = True
        self.workers = max(1, sum(self._client.nthreads().values()))

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        futures = self._client.map(screen_batch, [task] * len(batches), list(batches), pure=False)
        try:
            return self._client.gather(futures)
        except BaseException:
            self._client.cancel(futures)
            raise

    def close(self) -> None:
        if self._owned:
            self._client.close()


def make_executor(workers: int = 1, scheduler: Any = None) -> Executor:
    """Dask when ``scheduler`` is given, else ``workers`` local processes (1: in this process)."""
    if scheduler is not None:
        return DaskExecutor(scheduler)
    return InProcess() if workers == 1 else LocalProcesses(workers)
