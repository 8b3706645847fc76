"""The library's layers as the architecture page draws them, enforced on every import of every subpackage (parsed,
not run).

An import counts wherever it is written (module level or inside a function), absolute or relative.
A subpackage may import only from subpackages on lines above its own in the layer table of
docs/explanation/architecture.md (the documentation site shows it as written).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "lerobot_ros" / "lerobot_ros"
LAYERS_PAGE = ROOT / "docs" / "explanation" / "architecture.md"
MARKER = "<!-- layers: read by tests/unit/test_layers.py -->"
ROW = re.compile(r"^(\d+)\s+([a-z_]+(?:,\s*[a-z_]+)*)\s{2,}\S")


def layer_table(text: str) -> dict[str, int]:
    """subpackage -> layer number, from the fenced table after MARKER."""
    after = text.split(MARKER, 1)
    if len(after) != 2:
        raise AssertionError(
            f"{LAYERS_PAGE.relative_to(ROOT)} has no layer table (the line {MARKER!r} followed by a ```text block)"
        )
    block = after[1].split("```", 2)[1]
    layers: dict[str, int] = {}
    for line in block.splitlines():
        m = ROW.match(line.strip())
        if m:
            for name in re.split(r",\s*", m.group(2)):
                assert name not in layers, f"the layer table names {name!r} twice"
                layers[name] = int(m.group(1))
    return layers


def subpackages() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def imported_subpackages(path: Path) -> list[tuple[int, str]]:
    """(line, subpackage of lerobot_ros) for every import in the file; relative imports resolved."""
    own = path.relative_to(PACKAGE).with_suffix("").parts  # e.g. ("record", "session")
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from .x import y / from .. import z, relative to this module's package
                base = ["lerobot_ros", *own[: len(own) - node.level]]
                names = [".".join(base + ([node.module] if node.module else []))]
                if not node.module and len(base) == 1:  # from .. import codecs (at the package root)
                    names = [f"lerobot_ros.{a.name}" for a in node.names]
            else:
                names = [node.module or ""]
        for name in names:
            parts = name.split(".")
            if parts[0] == "lerobot_ros" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def layer_violations(layers: dict[str, int]) -> list[str]:
    out = []
    for pkg in subpackages():
        for path in sorted((PACKAGE / pkg).rglob("*.py")):
            for line, target in imported_subpackages(path):
                if target == pkg or target not in layers or pkg not in layers:
                    continue
                if layers[target] >= layers[pkg]:
                    kind = "sideways" if layers[target] == layers[pkg] else "upward"
                    out.append(
                        f"{path.relative_to(ROOT)}:{line}: {kind} import: {pkg} (layer {layers[pkg]}) imports "
                        f"{target} (layer {layers[target]}); the layer table allows only layers below {layers[pkg]}"
                    )
    return out


def test_layer_table_places_every_subpackage():
    layers = layer_table(LAYERS_PAGE.read_text())
    missing = [p for p in subpackages() if p not in layers]
    stale = [p for p in layers if p not in subpackages()]
    assert not missing, f"subpackages missing from the layer table of {LAYERS_PAGE.name}: {missing}"
    assert not stale, f"the layer table names subpackages that do not exist: {stale}"


def test_no_upward_or_sideways_import():
    violations = layer_violations(layer_table(LAYERS_PAGE.read_text()))
    assert not violations, "imports against the layers of docs/explanation/architecture.md:\n" + "\n".join(violations)


def test_the_check_sees_upward_sideways_and_relative_imports(tmp_path, monkeypatch):
    """The checker itself: a fake package with one import of each kind is caught, a downward one is not."""
    pkg = tmp_path / "lerobot_ros"
    for name, body in {
        "low": "",
        "mid": "from lerobot_ros.low import x\n",  # downward: allowed
        "peer": "def f():\n    import lerobot_ros.mid\n",  # sideways, inside a function
        "high": "",
    }.items():
        (pkg / name).mkdir(parents=True)
        (pkg / name / "__init__.py").write_text(body)
    (pkg / "low" / "bad.py").write_text("from ..high import y\n")  # upward, relative
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = layer_violations({"low": 0, "mid": 1, "peer": 1, "high": 2})
    assert len(found) == 2, found
    assert any("upward import: low (layer 0) imports high (layer 2)" in v and "bad.py:1" in v for v in found)
    assert any("sideways import: peer (layer 1) imports mid (layer 1)" in v for v in found)


def test_layer_table_parser():
    text = f"x\n{MARKER}\n```text\nlayer  subpackages  what\n0      a             first\n1      b, c          second\n```\n"
    assert layer_table(text) == {"a": 0, "b": 1, "c": 1}
    with pytest.raises(AssertionError, match="no layer table"):
        layer_table("no table here")


def test_nodes_stay_thin():
    """Nodes are wiring (the developer guide: no node module over 250 lines); logic goes into the library."""
    sizes = {p.name: len(p.read_text().splitlines()) for p in (PACKAGE / "nodes").glob("*.py")}
    too_long = {name: n for name, n in sizes.items() if n > 250}
    assert not too_long, f"node modules over 250 lines (move logic into a library module): {too_long}"
