"""Where a long run is: a bar within each layer on a terminal, lines on stderr without one.

:class:`ProgressDisplay` is told when a layer starts, how many of its steps are done (the
engine's progress hook, called after every step or block of steps: ``done`` may jump) and when
it ends. On a terminal (``style="bar"``) it draws one tqdm bar per layer (steps done of all,
rate and time left); without one (``style="lines"``) it writes a line when a long layer
starts, a heartbeat line every ``heartbeat_seconds`` while a layer runs and a line when each
layer ends. Updates are rate-limited here (at most one bar redraw per ``redraw_seconds``), so
a hook called for every step costs one clock read.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Literal, TextIO

from accelsim.budget import format_seconds
from accelsim.text_table import printable

Style = Literal["bar", "lines", "off"]
LONG_LAYER_SECONDS = 10.0  # a layer estimated to take longer gets a line when it starts


def choose_style(requested: bool | None, stream: TextIO) -> Style:
    """``--progress`` (True: a bar), ``--no-progress`` (False: nothing), default (None): a bar
    on a terminal, lines otherwise."""
    if requested is False:
        return "off"
    if requested or stream.isatty():
        return "bar"
    return "lines"


class ProgressDisplay:
    """Progress of a run of ``layers`` layers of ``network`` on ``stream`` (default: stderr)."""

    def __init__(self, network: str, layers: int, style: Style, stream: TextIO | None = None,
                 heartbeat_seconds: float = 30.0, redraw_seconds: float = 0.2,
                 clock: Callable[[], float] = time.monotonic):
        self.network = network
        self.layers = layers
        self.style = style
        self.stream = stream if stream is not None else sys.stderr
        self.heartbeat_seconds = heartbeat_seconds
        self.redraw_seconds = redraw_seconds
        self.clock = clock
        self.bar: Any = None
        self.label = ""
        self.started = self.last = 0.0
        self.shown_steps = 0

    def _write(self, text: str) -> None:
        print(f"accelsim: {printable(text)}", file=self.stream, flush=True)

    def layer_started(self, index: int, name: str, steps: int, estimate: str = "",
                      estimated_seconds: float = 0.0) -> None:
        """Layer ``index`` (from 0) named ``name`` with ``steps`` steps starts; ``estimate``
        describes its expected cost (shown for long layers)."""
        self.label = f"[{index + 1}/{self.layers}] {name}"
        self.started = self.last = self.clock()
        self.shown_steps = 0
        if self.style == "lines" and estimate and estimated_seconds >= LONG_LAYER_SECONDS:
            self._write(f"{self.network} {self.label}: starting, {estimate}")
        elif self.style == "bar" and steps > 1:
            from tqdm import tqdm

            self.bar = tqdm(total=steps, unit="step", desc=self.label, file=self.stream, leave=False,
                            dynamic_ncols=True, mininterval=self.redraw_seconds)

    def steps(self, done: int, total: int) -> None:
        """The engine's progress hook: ``done`` of ``total`` steps computed."""
        if self.style == "off":
            return
        now = self.clock()
        if self.style == "bar":
            if self.bar is not None and (now - self.last >= self.redraw_seconds or done >= total):
                self.bar.update(done - self.shown_steps)
                self.shown_steps = done
                self.last = now
        elif now - self.last >= self.heartbeat_seconds:
            self.last = now
            elapsed = now - self.started
            left = elapsed * (total - done) / done if done else 0.0
            self._write(f"{self.network} {self.label}: {done:,} of {total:,} steps ({100 * done / total:.0f}%), "
                        f"{format_seconds(elapsed)} elapsed, about {format_seconds(left)} left")

    def layer_finished(self, summary: str) -> None:
        """The layer started last has ended; ``summary`` says how (e.g. its cycles)."""
        self._close_bar()
        if self.style != "off":
            self._write(f"{self.network} {self.label}: done in {format_seconds(self.clock() - self.started)}, "
                        f"{summary}")

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def close(self) -> None:
        """Remove a bar still drawn (the run was interrupted or failed)."""
        self._close_bar()
