"""Read and rewrite CUDA artifacts in tests.

A CUDA artifact is one FlatBuffer of runtime/include/gpuopt/Runtime/
Artifact.fbs (program: CudaProgram). The tests read it, and build damaged
ones, through the schema compiler's JSON form (``flatc --json`` and
``flatc --binary``, utils/bootstrap.sh installs flatc): every field is a
plain value of a dict, an edit is a dict edit, and the rewritten file is a
well-formed FlatBuffer whose *contents* are wrong, which is what the
runtime's checks past the schema verifier must catch. It carries the
checksum of its new bytes (``stamp``), as gpuopt-compile's files do: the
runtime refuses a file whose bytes do not give it.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
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


# Model.checksum's slot in the root table's vtable, as the generated reader has it.
_VT_CHECKSUM = int(
    re.search(
        r"VT_CHECKSUM = (\d+)", (SCHEMA.parent / "Generated" / "Artifact_generated.h").read_text()
    ).group(1)
)


def checksum_offset(data: bytes) -> int | None:
    """Where Model.checksum's four bytes lie in an artifact, or None when it stores none
    (FlatBuffers' layout: the root offset, the table's signed offset to its vtable, the
    field's slot)."""
    try:
        (root,) = struct.unpack_from("<I", data, 0)
        (to_vtable,) = struct.unpack_from("<i", data, root)
        vtable = root - to_vtable
        (vtable_bytes,) = struct.unpack_from("<H", data, vtable) if vtable >= 0 else (0,)
        if vtable_bytes < _VT_CHECKSUM + 2:
            return None
        (field,) = struct.unpack_from("<H", data, vtable + _VT_CHECKSUM)
    except struct.error:  # outside the buffer (a damaged one)
        return None
    return root + field if field and root + field + 4 <= len(data) else None


def checksum(data: bytes) -> int:
    """The artifact's CRC-32 as gpuopt-compile writes it: zlib's, with Model.checksum's
    bytes read as zero."""
    at = checksum_offset(data)
    if at is None:
        return zlib.crc32(data)
    return zlib.crc32(data[:at] + bytes(4) + data[at + 4 :])


def stamp_bytes(data: bytearray, required: bool = True) -> bytearray:
    """Writes the checksum of an artifact's bytes into its Model.checksum, which it must
    store when `required` (else a buffer without one is returned as it is)."""
    at = checksum_offset(data)
    assert at is not None or not required, "the artifact stores no checksum"
    if at is not None:
        struct.pack_into("<I", data, at, checksum(data))
    return data


def stamp(path: Path) -> Path:
    """stamp_bytes on a file."""
    path.write_bytes(bytes(stamp_bytes(bytearray(path.read_bytes()))))
    return path


def from_json(model: dict, out: Path, stamped: bool = True) -> Path:
    """Writes `model` (a dict of to_json's form) as a FlatBuffer to `out`, with the
    checksum of its bytes (`stamped`) or without the field."""
    model = dict(model)
    # flatc stores a field that differs from its default: 1 holds the place.
    model["checksum"] = 1 if stamped else 0
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "model.json"
        src.write_text(json.dumps(model))
        subprocess.run([flatc(), "--binary", "-o", tmp, SCHEMA, src], check=True, capture_output=True)
        shutil.move(Path(tmp) / "model.gpuopt", out)
    return stamp(out) if stamped else out


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
