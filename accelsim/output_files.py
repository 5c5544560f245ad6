"""Writing result files safely: every output path checked before any work, every file replaced
atomically.

:func:`check_outputs` refuses, before a run starts, an output that could not be written at its
end: a path that is a directory, whose directory is missing or not writable (read-only file
system, no permission), that already exists (unless ``force``), or that two options share.
:func:`write_atomic` writes a file's complete new text to a temporary file beside it and
renames it over the old one, so a reader (or a crash, a signal, a full disk) sees the old file
or the new one, never half of one; when the write fails the temporary file is removed and a
:class:`~accelsim.errors.ResourceError` says so.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from accelsim.errors import InputError, ResourceError

TRACE_META_FILE = "meta.json"  # every layer directory of a trace holds one


# A spreadsheet reads a cell starting with one of these as a formula (OWASP, CSV injection).
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: str) -> str:
    """A text cell of a CSV file a spreadsheet will not run: one starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading single quote (OWASP's rule), so a
    layer named ``=HYPERLINK(...)`` stays text. Numbers are not text cells and are never changed."""
    return "'" + cell if cell.startswith(FORMULA_LEADS) else cell


def from_spreadsheet_safe(cell: str) -> str:
    """The text :func:`spreadsheet_safe` was given (its quote removed)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_LEADS) else cell


def _probe_writable(directory: Path, option: str, path: str) -> None:
    """Create and remove a file in ``directory``: the only test a read-only mount, a full
    quota or a permission set cannot fool."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".accelsim-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write in {directory}: {exc.strerror or exc}") from None


STDOUT_PATHS = ("-", "/dev/stdout")  # an output file given as one of these goes to standard output


def is_stdout(path: str | Path | None) -> bool:
    """Whether an output file option names standard output (``-`` or ``/dev/stdout``)."""
    return path is not None and str(path) in STDOUT_PATHS


def _given(option: str, path: str) -> Path:
    """``path`` as a Path; an empty one (which would mean the current directory) is refused."""
    if not path.strip():
        raise InputError(f"{option} is empty; give a path")
    return Path(path)


def check_output_file(option: str, path: str, force: bool) -> None:
    """Refuse (InputError naming the option) an output file that cannot be written or would
    overwrite an existing file without ``force``."""
    p = _given(option, path)
    if p.is_dir():
        raise InputError(f"{option} {path}: is a directory; give a file name")
    if p.exists() or p.is_symlink():
        if not force:
            raise InputError(f"{option} {path}: already exists; choose another name or pass --force to overwrite it")
        if not p.is_file():
            raise InputError(f"{option} {path}: exists and is not a regular file; remove it or choose another name")
    parent = p.parent
    if not parent.is_dir():
        raise InputError(f"{option} {path}: directory {parent} does not exist")
    _probe_writable(parent, option, path)


def trace_layer_dirs(directory: Path) -> tuple[list[Path], list[Path]]:
    """(layer directories an earlier trace wrote, other entries) of a trace directory."""
    ours: list[Path] = []
    others: list[Path] = []
    for entry in sorted(directory.iterdir()):
        (ours if entry.is_dir() and (entry / TRACE_META_FILE).is_file() else others).append(entry)
    return ours, others


def check_output_dir(option: str, path: str, force: bool) -> None:
    """Refuse a trace directory that is a file, cannot be created or written, or holds an
    earlier run (unless ``force``, and then only when it holds nothing but layer directories
    of earlier traces, which :func:`clear_trace_dir` removes)."""
    if not check_output_directory(option, path):
        return
    p = Path(path)
    ours, others = trace_layer_dirs(p)
    if (ours or others) and not force:
        raise InputError(f"{option} {path}: directory is not empty; choose another or pass --force to replace "
                         "the traces in it")
    if others:
        shown = ", ".join(e.name for e in others[:3]) + (", ..." if len(others) > 3 else "")
        raise InputError(f"{option} {path}: holds files that are not accelsim layer traces ({shown}); --force "
                         "only replaces earlier traces, so remove them or choose another directory")


def check_output_directory(option: str, path: str, parents: bool = False) -> bool:
    """Refuse a directory a command fills (``--trace``, ``search --out``, ``validate --out``)
    that is empty as a path, exists as a file, cannot be created (its parent missing, or with
    ``parents``, which lets the command create missing parents too, its nearest existing
    ancestor not a directory) or cannot be written; True when it exists already (what it may
    hold is the command's to judge)."""
    p = _given(option, path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{option} {path}: exists and is not a directory")
    if not p.exists():
        parent = p.parent
        while parents and not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.exists():
            raise InputError(f"{option} {path}: directory {parent} does not exist")
        if not parent.is_dir():
            raise InputError(f"{option} {path}: {parent} is not a directory")
        _probe_writable(parent, option, path)
        return False
    _probe_writable(p, option, path)
    return True


def clear_trace_dir(path: str) -> None:
    """Remove the layer directories of an earlier trace (checked by :func:`check_output_dir`),
    so a new trace is never mixed with an old one."""
    p = Path(path)
    if p.is_dir():
        for layer_dir in trace_layer_dirs(p)[0]:
            shutil.rmtree(layer_dir)


def check_outputs(files: Mapping[str, str | None], force: bool,
                  directories: Mapping[str, str | None] | None = None) -> None:
    """Check every output of a command before it does any work: each file (``{"--json":
    path, ...}``, None for an option not given) with :func:`check_output_file`, each
    directory with :func:`check_output_dir`, and that no two options name the same path
    (standard output included: ``-`` or ``/dev/stdout``, which is not checked further)."""
    to_stdout = [option for option, path in files.items() if is_stdout(path)]
    if len(to_stdout) > 1:
        raise InputError(f"{' and '.join(to_stdout)} both write to standard output; give at most one of them '-'")
    given = {option: path for option, path in files.items() if path is not None and not is_stdout(path)}
    dirs = {option: path for option, path in (directories or {}).items() if path is not None}
    seen: dict[Path, str] = {}
    for option, path in (given | dirs).items():
        key = _given(option, path).resolve()
        if key in seen:
            raise InputError(f"{seen[key]} and {option} name the same path {path}; give each output its own")
        seen[key] = option
    for option, path in given.items():
        check_output_file(option, path, force)
    for option, path in dirs.items():
        check_output_dir(option, path, force)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGALRM (``--max-seconds``) until the block ends (where the
    platform allows it), so a stop requested while a file is being replaced waits until it is."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGALRM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_atomic(path: str | Path, text: str) -> None:
    """Replace ``path`` by a file holding ``text`` (UTF-8): written beside it, then renamed, so
    the old file stays whole until the new one is (SIGINT and SIGTERM wait meanwhile). A failed
    write (disk full, file size limit, I/O error) leaves the old file, removes the partial one
    and raises ResourceError. A ``path`` naming standard output (:func:`is_stdout`) gets the
    text written there."""
    if is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with _signals_held():
        _replace(Path(path), text)


def _replace(p: Path, text: str) -> None:
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        kept = "the previous version is kept" if p.exists() else "nothing was written"
        raise ResourceError(f"{p}: cannot write: {exc.strerror or exc} ({kept})") from None
