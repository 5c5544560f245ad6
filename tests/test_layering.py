"""The package's layering (README, Architecture): a module never imports from a layer above its
own, and packages on the same layer do not import each other.

Every ``import`` is checked, including those inside functions and ``TYPE_CHECKING`` blocks: a
deferred import is still a dependency.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import accelsim

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_layers() -> tuple[tuple[str, ...], ...]:
    """The layer table of the README's Architecture section, bottom to top: per row, the
    top-level modules and packages of ``accelsim`` (``__init__`` is the package's own file)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Architecture"):]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", section, flags=re.M)
    assert rows and [int(n) for n, _ in rows] == list(range(len(rows))), "layer rows must be numbered 0, 1, ..."
    names = [tuple(n.rstrip("/").removesuffix(".py") for n in re.findall(r"`([^`]+)`", cell)) for _, cell in rows]
    return tuple(tuple("" if n == "__init__" else n for n in row) for row in names)


LAYERS = _readme_layers()
# Same-layer imports that are part of the design (the bounds are computed on results; the rates
# follow the idealized effects; a result is assembled from counts, with its bounds, at the rates).
SAME_LAYER_ALLOWED = {("bounds", "results"), ("rates", "model_options"), ("tally", "results"), ("tally", "bounds"),
                      ("tally", "rates")}

PACKAGE_ROOT = Path(accelsim.__file__).parent
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def _unit(module: str) -> str:
    """``accelsim.sim.engine`` -> ``sim``; ``accelsim`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(text: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module) of every accelsim import in the source ``text`` of ``module``."""
    tree = ast.parse(text)
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("accelsim")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("accelsim"):
                found.append((node.lineno, target))
    return found


SOURCES = sorted(PACKAGE_ROOT.rglob("*.py"))


def test_every_module_has_a_layer():
    """A new top-level module or package must be placed on a layer (here and in the README)."""
    units = {_unit(_module_name(p)) for p in SOURCES}
    assert units - set(LAYER_OF) == set()


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE_ROOT)))
def test_imports_point_down(path: Path):
    me = _unit(_module_name(path))
    bad = []
    text = path.read_text(encoding="utf-8")
    for line, module in _imports(text, _module_name(path), path.name == "__init__.py"):
        other = _unit(module)
        if other == me:
            continue
        if LAYER_OF[other] > LAYER_OF[me]:
            bad.append(f"line {line}: imports {module} (layer {LAYER_OF[other]}) from layer {LAYER_OF[me]}")
        elif LAYER_OF[other] == LAYER_OF[me] and (me, other) not in SAME_LAYER_ALLOWED:
            bad.append(f"line {line}: imports {module}, a peer on the same layer {LAYER_OF[me]}")
    assert not bad, "\n".join(bad)


def test_the_scan_resolves_every_kind_of_import():
    """Absolute, relative (module and package) and function-level imports are all seen."""
    text = "from .profile import X\nfrom . import dram\ndef f():\n    from accelsim.trace import events\n"
    assert _imports(text, "accelsim.sim.engine", False) == [
        (1, "accelsim.sim.profile"), (2, "accelsim.sim"), (4, "accelsim.trace")]
    assert _imports("from .engine import Y\n", "accelsim.sim", True) == [(1, "accelsim.sim.engine")]
