"""Where candidates are scored: in this process, in local worker processes, or on a Dask cluster.

Every executor runs the same pure function (:func:`accelsim.search.models.screen_batch`: compile,
check, name and score a batch of candidates) on the same batches and returns their results in order, so results do not depend on the executor.
Two ways in: :meth:`Executor.map_batches` scores batches and waits for all of them;
:meth:`Executor.submit` starts one batch and :meth:`Executor.next_done` hands back whichever
submitted batch finishes next (how :mod:`accelsim.search.overlap` keeps several layers' batches
in flight). Local workers are spawned once per executor and ignore Ctrl-C (the parent handles it and
terminates them); a Dask cluster is reached by its scheduler address or a
``distributed.Client`` the caller already has (optional extra ``distributed``); a task's model
context (layer, hardware) is sent to Dask's workers once (scattered), not with every batch.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
from collections import deque
from collections.abc import Hashable, Sequence
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

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        """Start ``screen_batch(task, batch)``; its result comes back from :meth:`next_done`
        with ``tag``."""
        ...

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        """(tag, result) of a submitted batch that has finished, waiting for one if none has; in
        the order they finish. Only call it with a batch submitted and not yet returned."""
        ...

    def drop(self) -> None:
        """Forget every batch submitted and not yet returned (Dask cancels them; local workers
        finish theirs, whose results are discarded by the caller, which knows its tags)."""
        ...

    def close(self) -> None:
        """Stop the workers (at once: work in flight is dropped)."""
        ...


class InProcess:
    """Score in the calling process (no parallelism, no start-up cost): a submitted batch is
    scored at once."""

    workers = 1

    def __init__(self) -> None:
        self._done: deque[tuple[Hashable, list[Screened]]] = deque()

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        return [screen_batch(task, batch) for batch in batches]

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        self._done.append((tag, screen_batch(task, batch)))

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        return self._done.popleft()

    def drop(self) -> None:
        self._done.clear()

    def close(self) -> None:
        self._done.clear()


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
        # (tag, result, error) of finished batches, put by the pool's result thread
        self._done: queue.Queue[tuple[Hashable, list[Screened] | None, BaseException | None]] = queue.Queue()

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        return self._pool.starmap(screen_batch, [(task, batch) for batch in batches], chunksize=1)

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        self._pool.apply_async(screen_batch, (task, batch), callback=lambda out: self._done.put((tag, out, None)),
                               error_callback=lambda exc: self._done.put((tag, None, exc)))

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        tag, out, error = self._done.get()  # a signal (Ctrl-C, --max-seconds) interrupts the wait
        if error is not None:
            raise error
        assert out is not None
        return tag, out

    def drop(self) -> None:
        pass  # the pool cannot take back a batch; its result arrives under a tag nobody waits for

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
        self._contexts: dict[int, tuple[ModelTask, Any]] = {}  # id(task) -> the task, its scattered future
        self._tags: dict[Any, Hashable] = {}  # future -> tag, of batches submitted and not returned
        # on the client's own loop: the client is not made the default one, so as_completed must
        # not look for a default client (it raises "No clients found" without one)
        self._finished = distributed.as_completed(loop=self._client.loop)

    def _context(self, task: ModelTask) -> Any:
        """``task`` on the workers: scattered to every worker the first time (a few kB each), then
        referred to by its future, so a batch carries only its dataflows."""
        if id(task) not in self._contexts:
            self._contexts[id(task)] = (task, self._client.scatter(task, broadcast=True, hash=False))
        return self._contexts[id(task)][1]

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        context = self._context(task)
        futures = [self._client.submit(screen_batch, context, batch, pure=False) for batch in batches]
        try:
            return self._client.gather(futures)
        except BaseException:
            self._client.cancel(futures)
            raise

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        future = self._client.submit(screen_batch, self._context(task), batch, pure=False)
        self._tags[future] = tag
        self._finished.add(future)

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        future = next(self._finished)
        return self._tags.pop(future), future.result()

    def drop(self) -> None:
        self._client.cancel(list(self._tags))
        self._tags.clear()
        self._finished.clear()

    def close(self) -> None:
        self.drop()
        if self._owned:
            self._client.close()


def make_executor(workers: int = 1, scheduler: Any = None) -> Executor:
    """Dask when ``scheduler`` is given, else ``workers`` local processes (1: in this process)."""
    if scheduler is not None:
        return DaskExecutor(scheduler)
    return InProcess() if workers == 1 else LocalProcesses(workers)
