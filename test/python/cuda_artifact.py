"""Read and rewrite CUDA artifacts in tests.

A CUDA artifact is one FlatBuffer of runtime/include/gpuopt/Runtime/
Artifact.fbs (program: CudaProgram). The tests read it, and build damaged
ones, through the schema compiler's JSON form (``flatc --json`` and
``flatc --binary``, utils/bootstrap.sh installs flatc): every field is a
plain value of a dict, an edit is a dict edit, and the rewritten file is a
well-formed FlatBuffer whose *contents* are wrong, which is what the
runtime's checks past the schema verifier must catch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "runtime" / "include" / "gpuopt" / "Runtime" / "Artifact.fbs"


def flatc() -> str:
    path = shutil.which("flatc")
    assert path, "flatc missing (flatbuffers-compiler): run utils/bootstrap.sh"
    return path


def to_json(path: Path) -> dict:
    """The whole artifact as a dict (defaults included, enums by name)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [flatc(), "--json", "--strict-json", "--defaults-json", "-o", tmp, SCHEMA, "--", path],
            check=True,
            capture_output=True,
        )
        return json.loads((Path(tmp) / f"{path.stem}.json").read_text())


def from_json(model: dict, out: Path) -> Path:
    """Writes `model` (a dict of to_json's form) as a FlatBuffer to `out`."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "model.json"
        src.write_text(json.dumps(model))
        subprocess.run([flatc(), "--binary", "-o", tmp, SCHEMA, src], check=True, capture_output=True)
        shutil.move(Path(tmp) / "model.gpuopt", out)
    return out


def program(model: dict) -> dict:
    """The CudaProgram of an artifact's dict."""
    assert model["program_type"] == "CudaProgram", model["program_type"]
    return model["program"]


def images(model: dict) -> dict[str, bytes]:
    """The kernel images, by chip."""
    return {i["chip"]: bytes(i["data"]) for i in program(model)["images"]}


def rewrite(artifact: Path, out: Path, edit: object) -> Path:
    """A copy of `artifact` with `edit(model_dict)` applied."""
    model = to_json(artifact)
    edit(model)
    return from_json(model, out)


def location_text(sources: list[str], loc: str) -> str:
    """The runtime's "at a.py:1:2, a.py:3:4 and 2 more" of a step (empty
    without any location)."""
    if not sources:
        return f"at {loc}" if loc else ""
    text = "at " + ", ".join(sources[:3])
    return text + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")


def describe_step(model: dict, plan: str, index: int) -> str:
    """How the runtime names step `index` of `plan` ("init", "run") in its
    messages: "run[3] (kernel 'k' at a.py:1:2)", "run[4] (library 'conv2d'
    at a.py:5:6)" (describeCudaStep)."""
    prog = program(model)
    step = prog[plan][index]
    at = location_text(step.get("sources") or [], step.get("loc") or "")
    if step.get("kind") == "Library":
        what = f"library '{step['library']}'"
    else:
        what = f"kernel '{prog['kernels'][step['kernel']]['name']}'"
    return f"{plan}[{index}] ({what}{' ' + at if at else ''})"
