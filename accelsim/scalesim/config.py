"""Reader for SCALE-Sim's ``.cfg`` file (INI syntax, ``key: value`` or ``key = value``).

The fields that matter to the systolic model (SCALE-Sim v2/v3 names; keys are
case-insensitive as in SCALE-Sim, which reads them with ``configparser``)::

    [general]              run_name
    [architecture_presets] ArrayHeight, ArrayWidth          PE rows and columns
                           IfmapSramSzkB, FilterSramSzkB,   the three double-buffered SRAMs,
                           OfmapSramSzkB                    in kB of 1024 one-byte words
                           Dataflow                         os | ws | is
                           Bandwidth                        words/cycle; with USER, SCALE-Sim
                                                            uses the first value for OFMAP writes
    [layout]               IfmapSRAMBankBandwidth,          with USER, the words/cycle SCALE-Sim
                           FilterSRAMBankBandwidth          gives the IFMAP and filter DRAM reads
                           IfmapCustomLayout, FilterCustomLayout (must be false: not modelled)
    [run_presets]          InterfaceBandwidth               USER (the bandwidths above) or CALC
                                                            (SCALE-Sim estimates the bandwidth
                                                            it needs and never stalls)
                           UseRamulatorTrace                must be false (not modelled)
    [sparsity]             SparsitySupport                  must be false (not modelled)

Offsets, request-buffer sizes and memory banks only shape SCALE-Sim's address traces, and
TopologyCsvLoc is superseded by the topology given explicitly; they are ignored. Sections SCALE-Sim 3.0.0 requires but older files lack (``[layout]``,
``[sparsity]``, ``UseRamulatorTrace``) take SCALE-Sim's defaults.
"""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from pathlib import Path

from accelsim.errors import InputError
from accelsim.input_files import read_text

DATAFLOWS = ("os", "ws", "is")
BANDWIDTH_MODES = ("USER", "CALC")
# SCALE-Sim's bandwidths in CALC mode (single_layer_sim.py): 10 words/cycle for IFMAP and
# filter reads, one word per array column for OFMAP writes.
CALC_READ_BANDWIDTH_WORDS_PER_CYCLE = 10
DEFAULT_SRAM_BANK_BANDWIDTH_WORDS_PER_CYCLE = 10  # SCALE-Sim's scale_config default


@dataclass(frozen=True)
class ScaleSimConfig:
    """A SCALE-Sim configuration (sizes in kB = 1024 bytes, bandwidths in words per cycle,
    one word = one byte as in SCALE-Sim)."""

    run_name: str
    array_rows: int
    array_cols: int
    ifmap_sram_kb: int
    filter_sram_kb: int
    ofmap_sram_kb: int
    dataflow: str  # os | ws | is
    bandwidth_mode: str  # USER | CALC
    bandwidths_words_per_cycle: tuple[int, ...]  # the Bandwidth list (may be empty with CALC)
    ifmap_dram_bandwidth_words_per_cycle: int  # SCALE-Sim's IFMAP backing bandwidth
    filter_dram_bandwidth_words_per_cycle: int  # its filter backing bandwidth
    ofmap_dram_bandwidth_words_per_cycle: int  # its OFMAP backing bandwidth
    source: str = ""

    @property
    def num_pes(self) -> int:
        return self.array_rows * self.array_cols

    @property
    def sram_bytes(self) -> int:
        """The three SRAMs together, in bytes."""
        return 1024 * (self.ifmap_sram_kb + self.filter_sram_kb + self.ofmap_sram_kb)

    @property
    def dram_bandwidth_words_per_cycle(self) -> int:
        """SCALE-Sim's three DRAM channels (IFMAP, filter, OFMAP) together."""
        return (self.ifmap_dram_bandwidth_words_per_cycle + self.filter_dram_bandwidth_words_per_cycle
                + self.ofmap_dram_bandwidth_words_per_cycle)


class _Reader:
    """Typed access to one parsed .cfg with errors naming the file, line and key."""

    def __init__(self, text: str, source: str):
        self.source = source
        self.lines = text.splitlines()
        self.parser = configparser.ConfigParser(interpolation=None)
        try:
            self.parser.read_string(text, source=source)
        except configparser.MissingSectionHeaderError as exc:
            raise InputError("expected a section header such as [architecture_presets] before the "
                             "first key", source=source, line=exc.lineno) from None
        except (configparser.DuplicateOptionError, configparser.DuplicateSectionError) as exc:
            what = f"key {exc.option!r} in [{exc.section}]" if isinstance(exc, configparser.DuplicateOptionError) \
                else f"section [{exc.section}]"
            raise InputError(f"{what} is given twice", source=source, line=exc.lineno) from None
        except configparser.ParsingError as exc:
            lineno = exc.errors[0][0]
            raise InputError(f"cannot parse {self.lines[lineno - 1].strip()!r}; expected 'Key: value' or "
                             "'Key = value'", source=source, line=lineno) from None

    def line_of(self, section: str, key: str) -> int | None:
        """Line number of ``key`` in ``[section]`` (for messages)."""
        current = None
        for i, line in enumerate(self.lines, start=1):
            stripped = line.strip()
            if stripped.startswith("["):
                current = stripped.strip("[]").strip()
            elif current == section and re.match(rf"{re.escape(key)}\s*[:=]", stripped, re.IGNORECASE):
                return i
        return None

    def raw(self, section: str, key: str, default: str | None = None) -> str:
        if self.parser.has_option(section, key):
            return self.parser.get(section, key).strip()
        if default is not None:
            return default
        if not self.parser.has_section(section):
            raise InputError(f"missing section [{section}] (needed for {key})", source=self.source)
        raise InputError(f"[{section}] is missing {key}", source=self.source)

    def fail(self, section: str, key: str, message: str) -> InputError:
        return InputError(f"[{section}] {key}: {message}", source=self.source, line=self.line_of(section, key))

    def positive_int(self, section: str, key: str, default: int | None = None) -> int:
        text = self.raw(section, key, None if default is None else str(default))
        try:
            value = int(text)
        except ValueError:
            raise self.fail(section, key, f"expected a positive integer, got {text!r}") from None
        if value < 1:
            raise self.fail(section, key, f"expected a positive integer, got {value}")
        return value

    def boolean(self, section: str, key: str, default: bool) -> bool:
        text = self.raw(section, key, str(default))
        if text.lower() in ("true", "yes", "on", "1"):
            return True
        if text.lower() in ("false", "no", "off", "0"):
            return False
        raise self.fail(section, key, f"expected True or False, got {text!r}")

    def refuse_if_true(self, section: str, key: str, what: str) -> None:
        if self.boolean(section, key, False):
            raise self.fail(section, key, f"{what} is not modelled by accelsim; set it to False")


def read_scalesim_config(path: str | Path) -> ScaleSimConfig:
    """Read a SCALE-Sim ``.cfg``; raise InputError naming the file, line and key on any problem."""
    source = str(path)
    text = read_text(path, "SCALE-Sim config")
    r = _Reader(text, source)
    arch = "architecture_presets"
    dataflow = r.raw(arch, "Dataflow").lower()
    if dataflow not in DATAFLOWS:
        raise r.fail(arch, "Dataflow", f"expected one of {', '.join(DATAFLOWS)}, got {dataflow!r}")
    mode = r.raw("run_presets", "InterfaceBandwidth").upper()
    if mode not in BANDWIDTH_MODES:
        raise r.fail("run_presets", "InterfaceBandwidth", f"expected USER or CALC, got {mode!r}")
    r.refuse_if_true("run_presets", "UseRamulatorTrace", "a Ramulator DRAM trace")
    r.refuse_if_true("sparsity", "SparsitySupport", "sparsity")
    r.refuse_if_true("layout", "IfmapCustomLayout", "a custom IFMAP SRAM layout")
    r.refuse_if_true("layout", "FilterCustomLayout", "a custom filter SRAM layout")
    bandwidths: tuple[int, ...] = ()
    bw_text = r.raw(arch, "Bandwidth", "" if mode == "CALC" else None)
    if bw_text:
        try:
            bandwidths = tuple(int(x.strip()) for x in bw_text.split(","))
        except ValueError:
            raise r.fail(arch, "Bandwidth", f"expected comma-separated positive integers (words/cycle), "
                                            f"got {bw_text!r}") from None
        if any(b < 1 for b in bandwidths):
            raise r.fail(arch, "Bandwidth", f"expected positive integers (words/cycle), got {bw_text!r}")
    rows = r.positive_int(arch, "ArrayHeight")
    cols = r.positive_int(arch, "ArrayWidth")
    if mode == "USER":
        ifmap_bw = r.positive_int("layout", "IfmapSRAMBankBandwidth", DEFAULT_SRAM_BANK_BANDWIDTH_WORDS_PER_CYCLE)
        filter_bw = r.positive_int("layout", "FilterSRAMBankBandwidth", DEFAULT_SRAM_BANK_BANDWIDTH_WORDS_PER_CYCLE)
        ofmap_bw = bandwidths[0]
    else:
        ifmap_bw = filter_bw = CALC_READ_BANDWIDTH_WORDS_PER_CYCLE
        ofmap_bw = cols
    return ScaleSimConfig(
        run_name=r.raw("general", "run_name", Path(path).stem),
        array_rows=rows,
        array_cols=cols,
        ifmap_sram_kb=r.positive_int(arch, "IfmapSramSzkB"),
        filter_sram_kb=r.positive_int(arch, "FilterSramSzkB"),
        ofmap_sram_kb=r.positive_int(arch, "OfmapSramSzkB"),
        dataflow=dataflow,
        bandwidth_mode=mode,
        bandwidths_words_per_cycle=bandwidths,
        ifmap_dram_bandwidth_words_per_cycle=ifmap_bw,
        filter_dram_bandwidth_words_per_cycle=filter_bw,
        ofmap_dram_bandwidth_words_per_cycle=ofmap_bw,
        source=source,
    )
