"""Where candidates are scored: in this process, in local worker processes, or on a Dask cluster.

Every executor runs the same pure function (:func:`accelsim.search.models.screen_batch`: compile,
check, name and score a batch of candidates) on the same batches and returns their results in order, so results do not depend on the executor.
Two ways in: :meth:`Executor.map_batches` scores batches and waits for all of them;
:meth:`Executor.submit` starts one batch and :meth:`Executor.next_done` hands back whichever
submitted batch finishes next (how :mod:`accelsim.search.overlap` keeps several layers' batches
in flight). Local workers are spawned once per executor, fed over a pipe each by the calling thread,
and ignore Ctrl-C (the parent handles it and terminates them); a Dask cluster is reached by its
scheduler address or a ``distributed.Client`` the caller already has (optional extra
``distributed``); a task's model context (layer, hardware) is sent to each local worker once and
to Dask's workers once (scattered), not with every batch.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections import deque
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from itertools import count
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol, cast

from accelsim.errors import InputError, ResourceError
from accelsim.mapping.ast import Directive
from accelsim.search.models import ModelTask, Screened, screen_batch

Batch = Sequence[Sequence[Directive]]
# the protocols of scheduler addresses accepted (others, e.g. ucx://, need packages of their own)
SCHEMES = ("tcp", "tls", "ws", "wss", "inproc")
# the fewest candidates a batch is given when a request is split (:func:`accelsim.search.overlap.batches`),
# per executor: what a batch's round trip is worth. Local workers: a message down a pipe and back;
# on 16 idle cores, bench --search's lone layers went out in batches of one or two at 6.86-6.95x,
# and in batches of 6-7 (one per worker) at 8.00x
MIN_BATCH_CANDIDATES = 4
# Dask: a task costs its caller's process (where a LocalCluster's scheduler and nannies also run)
# several messages, each a socket write and read, the scheduler's transitions and the result's
# fetch; on the 2-core machine (load 3-5), bench --search's 1,500 genomes on 2 workers went out
# as 110-112 tasks with 4 a batch and as 60 with 25 (half a 50-candidate ask), the parent's CPU
# 1.33-1.44 s against 0.83-1.06 s (both with LOCAL_CLUSTER_CONFIG)
DASK_MIN_BATCH_CANDIDATES = 25
# settings for a LocalCluster that screens (:func:`local_cluster`): the workers' statistical
# profiler samples the screening thread's stack every 10 ms (5% of a worker's CPU measured on a
# busy task); the event loop's tick (every 20 ms), the system monitor (every 0.5 s) and work
# stealing (every 0.1 s) cost the process holding the scheduler and the nannies; together 0.03 of
# a core there and 0.008 without (2-core machine, the workers sleeping, four runs)
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing": False,
}


class Executor(Protocol):
    """Scores batches of dataflows; ``workers``: how many run at once; ``min_batch_candidates``:
    the fewest candidates worth a batch of their own when a request is split."""

    workers: int
    min_batch_candidates: int

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
    min_batch_candidates = MIN_BATCH_CANDIDATES

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


# batches a local worker is handed beyond the one it runs, so that it need not wait for a busy
# parent to send the next (the worker's reader thread takes it off the pipe and holds it); on 16
# idle cores bench --search's scenario took the same with 0 (1.51 s) as with 1 (1.50-1.51 s), where
# the parent has little else to do; a search's parent also runs the mapper and writes the rows
AHEAD_PER_WORKER = 1


def _serve(conn: Connection, parent: int) -> None:
    """A local worker: screen each batch the parent sends, ``(number, task id, task or None,
    batch)``, and send back ``(number, results, error)``, until the pipe closes (the parent
    terminates its workers when it is done, and they die with it). A task (layer, hardware) is sent to a worker once and referred to by its id after. A
    thread takes the parent's messages off the pipe as they come, so the parent never waits to
    hand over a batch while this worker screens another."""
    _worker_start(parent)
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                message = conn.recv()
            except Exception:  # noqa: BLE001 - the parent gone, or a message that does not read: stop
                message = None
            inbox.put(message)
            if message is None:
                return

    threading.Thread(target=read, daemon=True).start()
    tasks: dict[int, ModelTask] = {}
    while (message := inbox.get()) is not None:
        number, task_id, task, batch = message
        if task is not None:
            tasks[task_id] = task
        try:
            conn.send((number, screen_batch(tasks[task_id], batch), None))
        except Exception as exc:  # noqa: BLE001 - the parent raises it where it waits
            try:
                conn.send((number, None, exc))
            except Exception:  # noqa: BLE001 - an exception that does not pickle
                conn.send((number, None, RuntimeError(f"{type(exc).__name__}: {exc}")))


class _Worker:
    """The parent's end of one local worker: its process, its pipe, the numbers of the batches
    sent to it and not yet back (oldest first), and the ids of the tasks it holds."""

    def __init__(self, context: Any, parent: int):
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child, parent), daemon=True)
        self.process.start()
        child.close()
        self.sent: deque[int] = deque()
        self.tasks: set[int] = set()


def _ended(worker: _Worker) -> ResourceError:
    """The error for a local worker process that ended while it had batches (waits up to 1 s
    for its exit status)."""
    worker.process.join(1)
    return ResourceError(f"a local worker process ended while scoring (exit status {worker.process.exitcode}; "
                         "-9 is how the out-of-memory killer ends one): use fewer --workers, or a smaller "
                         "--work-budget")


class LocalProcesses:
    """``workers`` spawned worker processes of this machine (spawned, not forked: the parent may
    hold threads, e.g. a progress bar's), each fed by the calling thread over its own pipe (no
    helper threads in the parent: with many workers the parent's time is what limits the
    speed-up). A batch goes to a worker with fewer than ``1 + AHEAD_PER_WORKER`` batches, the idlest
    first; the others wait here in the order submitted."""

    min_batch_candidates = MIN_BATCH_CANDIDATES

    def __init__(self, workers: int):
        if workers < 1:
            raise InputError(f"--workers must be at least 1, got {workers}")
        self.workers = workers
        context = multiprocessing.get_context("spawn")
        self._pool: list[_Worker] = []
        try:
            for _ in range(workers):
                self._pool.append(_Worker(context, os.getpid()))
        except BaseException:
            self.close()
            raise
        self._by_conn = {worker.conn: worker for worker in self._pool}
        self._tasks: dict[int, ModelTask] = {}  # id -> task: kept so that an id is never reused
        self._waiting: deque[tuple[int, ModelTask, Batch]] = deque()  # (number, task, batch) not yet sent
        self._tags: dict[int, Hashable] = {}  # number -> tag, of batches submitted and not returned
        self._numbers = count()

    def map_batches(self, task: ModelTask, batches: Sequence[Batch]) -> list[list[Screened]]:
        mine = [object() for _ in batches]
        for tag, batch in zip(mine, batches):
            self.submit(task, batch, tag)
        wanted = set(mine)
        results: dict[Hashable, list[Screened]] = {}
        while len(results) < len(mine):
            tag, out = self.next_done()
            if tag in wanted:  # not a dropped batch of an earlier request
                results[tag] = out
        return [results[tag] for tag in mine]

    def submit(self, task: ModelTask, batch: Batch, tag: Hashable) -> None:
        number = next(self._numbers)
        self._tags[number] = tag
        self._tasks.setdefault(id(task), task)
        self._waiting.append((number, task, batch))
        self._feed()

    def _feed(self) -> None:
        """Send waiting batches to the workers with room, the idlest first."""
        while self._waiting:
            worker = min(self._pool, key=lambda w: len(w.sent))
            if len(worker.sent) > AHEAD_PER_WORKER:
                return
            number, task, batch = self._waiting.popleft()
            new = id(task) not in worker.tasks
            try:
                worker.conn.send((number, id(task), task if new else None, batch))
            except OSError:  # the worker's end is closed: it has ended
                raise _ended(worker) from None
            worker.tasks.add(id(task))
            worker.sent.append(number)

    def next_done(self) -> tuple[Hashable, list[Screened]]:
        busy = [worker.conn for worker in self._pool if worker.sent]
        if not busy:
            raise RuntimeError("next_done: no batch submitted and not yet returned")
        # a signal (Ctrl-C, SIGTERM, --max-seconds) interrupts the wait
        conn = wait(busy)[0]
        worker = self._by_conn[cast(Connection, conn)]
        try:
            number, out, error = worker.conn.recv()
        except (EOFError, OSError):  # closed, or reset by the ending process (ConnectionResetError)
            raise _ended(worker) from None
        worker.sent.popleft()
        self._feed()
        if error is not None:
            raise error
        return self._tags.pop(number), out

    def drop(self) -> None:
        """Forget the batches not yet sent; those sent are finished and come back under tags
        their caller no longer waits for."""
        for number, _, _ in self._waiting:
            del self._tags[number]
        self._waiting.clear()

    def close(self) -> None:
        for worker in self._pool:
            worker.process.terminate()
        for worker in self._pool:
            worker.process.join()
            worker.conn.close()
        self._pool = []


class DaskExecutor:
    """A Dask cluster: ``scheduler`` is a ``distributed.Client`` or a scheduler address such as
    ``tcp://host:8786``; ``workers`` is the cluster's worker thread count when connected. Its
    batches are larger than local workers' (``DASK_MIN_BATCH_CANDIDATES``): fewer tasks, each
    paying Dask's messages once."""

    min_batch_candidates = DASK_MIN_BATCH_CANDIDATES

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
        # not look for a default client (it raises "No clients found" without one); with the
        # results, fetched as each batch finishes instead of in one more round trip when taken
        self._finished = distributed.as_completed(loop=self._client.loop, with_results=True)

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
        future, result = next(self._finished)
        return self._tags.pop(future), result

    def drop(self) -> None:
        self._client.cancel(list(self._tags))
        self._tags.clear()
        self._finished.clear()

    def close(self) -> None:
        self.drop()
        if self._owned:
            self._client.close()


@contextmanager
def local_cluster(workers: int) -> Iterator[Any]:
    """A ``distributed.Client`` of a LocalCluster of this machine: ``workers`` worker processes
    of one thread each, started with ``LOCAL_CLUSTER_CONFIG``, no dashboard; closed on exit."""
    import dask
    import distributed

    with dask.config.set(LOCAL_CLUSTER_CONFIG), \
            distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def make_executor(workers: int = 1, scheduler: Any = None) -> Executor:
    """Dask when ``scheduler`` is given, else ``workers`` local processes (1: in this process)."""
    if scheduler is not None:
        return DaskExecutor(scheduler)
    return InProcess() if workers == 1 else LocalProcesses(workers)
