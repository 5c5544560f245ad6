"""Hardware descriptions: the typed spec, bundled presets and loaders."""

from accelsim.hw.loader import available_presets, dump_hardware, load_hardware
from accelsim.hw.spec import HardwareSpec

__all__ = ["HardwareSpec", "available_presets", "dump_hardware", "load_hardware"]
