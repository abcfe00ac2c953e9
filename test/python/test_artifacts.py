"""Compiled artifacts are checked before they are trusted (docs/Reliability.md).

A model library (``gpuopt-compile --target=cpu``) is checked before dlopen by
``gpuopt-run model.so`` (runtime/base/ModelLibrary.cpp) and by
``gpuopt.compiled.CompiledModel`` (its Python port): a regular file, a
complete ELF object of this machine, a gpuopt model of this ABI version.
After loading, the library compares its metadata with the hash compiled into
its code, and the generated code compares every descriptor with the shapes
it was compiled for. A CUDA artifact (``gpuopt-cuda-run``) is read only from
a regular file of bounded size, and every launch is checked against its
kernel's signature before any driver call. Every load runs in a subprocess,
so that a SIGBUS or a hang fails the test instead of ending pytest.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import cuda_artifact
import numpy as np
import pytest
import torch
from conftest import rel_l2
from cuda_artifact import stamp_bytes
from torch import nn

import gpuopt
from gpuopt.compiled import CompiledModel, compile_model
from gpuopt.randomize import randomize
from gpuopt.tools import build_dir, tool

# A hang is a failure; no test here takes more than a second when it works.
HANG = 120
CUDA_RUN = build_dir() / "bin" / "gpuopt-cuda-run"
PTXAS = Path("/usr/local/cuda/bin/ptxas")
needs_cuda = pytest.mark.skipif(
    not CUDA_RUN.exists() or not PTXAS.exists(), reason="no CUDA toolkit: gpuopt-cuda-run or ptxas missing"
)

# Loads a library with CompiledModel and runs it once; exit 1 with the
# message on CompiledModelError, 0 and the output in OUT otherwise.
LOAD = """
import sys
import numpy as np
from gpuopt.compiled import CompiledModel, CompiledModelError, ReaderLimits
so, weights, x, out, *limits = sys.argv[1:]
kwargs = {k: int(v) for k, v in (a.split("=") for a in limits)}
try:
    with CompiledModel(so, weights, limits=ReaderLimits(**kwargs)) as m:
        (y,) = m.run(np.load(x))
except CompiledModelError as e:
    print(e, file=sys.stderr)
    sys.exit(1)
np.save(out, y)
"""


class Net(nn.Module):
    """Conv-BN-ReLU: parameters, a load-time initializer (folded BatchNorm)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | np.ndarray]:
    out = tmp_path_factory.mktemp("artifacts")
    net = randomize(Net().eval(), seed=5)
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(6))
    gpuopt.export(net, (x,), out / "m.mlir", out / "m.safetensors")
    np.save(out / "x.npy", x.numpy())
    with torch.no_grad():
        expected = net(x).numpy()
    so = compile_model(out / "m.mlir", out / "m.so", pipeline="gpuopt-optimize")
    return {"dir": out, "so": so, "weights": out / "m.safetensors", "x": out / "x.npy", "expected": expected}


def load_both(model: dict, so: Path | str, *limits: str) -> list[tuple[str, subprocess.CompletedProcess]]:
    """gpuopt-run and CompiledModel on ``so``; limits as ``max_tensors=1``."""
    y = model["dir"] / "y.npy"
    flags = ["--" + a.replace("_", "-") for a in limits]
    run = [str(tool("gpuopt-run")), str(so), f"--weights={model['weights']}", f"--input=@{model['x']}"]
    py = [sys.executable, "-c", LOAD, str(so), str(model["weights"]), str(model["x"]), str(y), *limits]
    return [
        (who, subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=HANG))
        for who, cmd in (("gpuopt-run", [*run, f"--output=@{y}", *flags]), ("CompiledModel", py))
    ]


def assert_refused(model: dict, so: Path | str, message: str, *limits: str) -> None:
    for who, proc in load_both(model, so, *limits):
        assert proc.returncode == 1, f"{who} on {so}: exit {proc.returncode}\n{proc.stderr}"
        assert message in proc.stderr, f"{who} on {so}: {proc.stderr}"


def load_segments(data: bytes) -> list[tuple[int, int]]:
    """(file offset, file size) of every PT_LOAD segment of an ELF64 file."""
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    segments = []
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            segments.append((p_offset, p_filesz))
    return segments


def test_good_library_matches_pytorch(model: dict) -> None:
    """The checks accept what gpuopt-compile writes (the baseline of the cases below)."""
    for who, proc in load_both(model, model["so"]):
        assert proc.returncode == 0, f"{who}: {proc.stderr}"
        err = rel_l2(np.load(model["dir"] / "y.npy"), model["expected"])
        assert err <= 1e-4, f"{who}: relative L2 error {err:.3e}"


def test_truncated_library_is_refused(model: dict, tmp_path: Path) -> None:
    """Cut inside the ELF header, the program headers, the middle of every
    loadable segment and the section header table: a message, not SIGBUS."""
    data = Path(model["so"]).read_bytes()
    cuts = {"elf-header": 40, "program-headers": 100, "section-headers": len(data) - 10}
    for i, (offset, size) in enumerate(load_segments(data)):
        if size > 0:
            cuts[f"segment-{i}"] = offset + size // 2
    assert len(cuts) >= 5, cuts
    for name, cut in cuts.items():
        so = tmp_path / f"{name}.so"
        so.write_bytes(data[:cut])
        expected = "not an ELF file" if cut < 64 else "truncated or corrupt"
        assert_refused(model, so, f"cannot load {so}: {expected}")


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("zeroed", "corrupt program headers: no loadable or no dynamic segment"),
        ("misaligned", "corrupt loadable segment 1: offset "),
    ],
)
def test_damaged_program_headers_are_refused(model: dict, tmp_path: Path, damage: str, expected: str) -> None:
    """Program headers zeroed, or a loadable segment's offset moved off its
    alignment: a message from both loaders, not the loader's SIGSEGV."""
    data = bytearray(Path(model["so"]).read_bytes())
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    if damage == "zeroed":
        data[phoff : phoff + phnum * phentsize] = bytes(phnum * phentsize)
    else:
        loads = [
            phoff + i * phentsize
            for i in range(phnum)
            if struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 1
        ]
        offset = struct.unpack_from("<Q", data, loads[1] + 8)[0]
        struct.pack_into("<Q", data, loads[1] + 8, offset + 8)
    so = tmp_path / f"{damage}.so"
    so.write_bytes(bytes(data))
    assert_refused(model, so, f"cannot load {so}: {expected}")
    if damage == "misaligned":
        assert_refused(model, so, "do not fit alignment ")


SPECIAL_KINDS = ["fifo", "dev-zero", "dev-urandom", "directory"]


def make_special(path: Path, kind: str) -> Path:
    """Makes `path` a file of one of SPECIAL_KINDS (dev-X: a link to /dev/X)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/" + kind.removeprefix("dev-"))
    return path


@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_library_not_a_regular_file(model: dict, tmp_path: Path, kind: str) -> None:
    """FIFOs, devices and directories are refused without being opened
    (a FIFO would block, /dev/zero never ends)."""
    so = make_special(tmp_path / f"{kind}.so", kind)
    assert_refused(model, so, f"cannot load {so}: not a regular file")


NOTE_SIZE = 32  # sizeof(gpuopt_model_note), CompiledModel.h


def note_offset(data: bytes) -> int:
    """File offset of the gpuopt_model note: the start of the section of that
    name, found through the ELF section headers as the loaders find it."""
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = sections[shstrndx][4]
    found = []
    for sh_name, _, _, _, sh_offset, _ in sections:
        start = names_offset + sh_name
        if data[start : data.index(b"\0", start)] == b"gpuopt_model":
            found.append(sh_offset)
    assert len(found) == 1, f"expected one gpuopt_model section, found {len(found)}"
    assert data[found[0] : found[0] + 8] == b"GPUOPTMD", "no gpuopt model note"
    return found[0]


def metadata_span(data: bytes) -> tuple[int, int]:
    """Start and end of the metadata (the artifact FlatBuffer) in a library:
    the bytes after the note, as many as the note gives."""
    note = note_offset(data)
    size = struct.unpack_from("<Q", data, note + 16)[0]
    return note + NOTE_SIZE, note + NOTE_SIZE + size


def run_dump(path: Path | str) -> subprocess.CompletedProcess:
    """``gpuopt-run --dump`` of a library or artifact."""
    cmd = [str(tool("gpuopt-run")), "--dump", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=HANG)


def dump(path: Path | str) -> dict:
    """run_dump's output, parsed (the dump is JSON text)."""
    proc = run_dump(path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def fnv1a64(text: bytes) -> int:
    h = 14695981039346656037
    for b in text:
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h


def rehash_metadata(data: bytes) -> bytes:
    """``data`` with the metadata's own checksum (Model.checksum, where a
    damaged buffer still locates it) and the note's hash of it recomputed (of
    unchanged length): an edit the hashes alone cannot catch."""
    start, end = metadata_span(data)
    patched = bytearray(data)
    patched[start:end] = stamp_bytes(bytearray(data[start:end]), required=False)
    struct.pack_into("<Q", patched, note_offset(data) + 24, fnv1a64(patched[start:end]))
    return bytes(patched)


def shape_vector(shape: list[int]) -> bytes:
    """A FlatBuffers vector of int64 as stored: its uint32 length, then the
    elements (8-aligned, so with no padding between)."""
    return struct.pack(f"<I{len(shape)}q", len(shape), *shape)


def edit_input_shape(data: bytes, edit: object) -> bytes:
    """``data`` with ``edit(bytearray, offset)`` applied to both records of
    the input shape [1, 3, 8, 8] in the metadata: Model.inputs[0] and the
    forward function's argument 0 (the checks require them to agree)."""
    start, end = metadata_span(data)
    meta = dump_bytes(data)
    assert meta["inputs"] == [{"dtype": "F32", "shape": [1, 3, 8, 8]}], meta["inputs"]
    vector = shape_vector([1, 3, 8, 8])
    patched = bytearray(data)
    at = [i for i in range(start, end - len(vector) + 1) if data[i : i + len(vector)] == vector]
    assert len(at) == 2, f"expected the input shape twice in the metadata, found it {len(at)} times"
    for offset in at:
        edit(patched, offset)
    return bytes(patched)


def dump_bytes(data: bytes) -> dict:
    """dump() of a library given as bytes."""
    with tempfile.TemporaryDirectory() as d:
        so = Path(d) / "m.so"
        so.write_bytes(data)
        return dump(so)


def shrink_input(data: bytes) -> bytes:
    """The recorded input shape [1, 3, 8, 8] edited to [1, 3, 4, 8] (same length)."""

    def shrink(patched: bytearray, offset: int) -> None:
        struct.pack_into("<q", patched, offset + 4 + 2 * 8, 4)

    return edit_input_shape(data, shrink)


class Plain(nn.Module):
    """Net without the ReLU: the same parameters, another computation."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


def test_library_recompiled_to_the_same_path_is_reloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Net then Plain compiled to one path (gpuopt-compile replaces the file)
    and loaded in this process: the second load runs Plain's code (dlopen
    would hand back the library it loaded from that path before), and the
    private copies loaded are removed."""
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(copies))
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(7))
    so = tmp_path / "same.so"
    for seed, net in enumerate((Net(), Plain())):
        net = randomize(net.eval(), seed=seed)
        mlir, weights = tmp_path / f"{seed}.mlir", tmp_path / f"{seed}.safetensors"
        gpuopt.export(net, (x,), mlir, weights)
        compile_model(mlir, so, pipeline="gpuopt-optimize")
        with torch.no_grad():
            expected = net(x).numpy()
        # Plain's output has negatives, which Net's ReLU would clear.
        assert seed == 0 or (expected < 0).any()
        with CompiledModel(so, weights) as m:
            (y,) = m.run(x.numpy())
        err = rel_l2(y, expected)
        assert err < 1e-5, f"{type(net).__name__} from {so}: rel L2 {err}"
    assert list(copies.glob("gpuopt-model-*")) == []


def test_corrupted_metadata_is_refused(model: dict, tmp_path: Path) -> None:
    """An edited input shape would make the kernel read past the caller's
    buffer; the hash compiled into the code refuses it."""
    so = tmp_path / "shrunk.so"
    so.write_bytes(shrink_input(Path(model["so"]).read_bytes()))
    assert_refused(model, so, "corrupt model metadata: it does not match the checksum")


def test_metadata_disagreeing_with_code_is_refused(model: dict, tmp_path: Path) -> None:
    """The same edit with the hash patched to match: the generated code itself
    compares the descriptors with its static shapes and runs nothing."""
    so = tmp_path / "rehashed.so"
    so.write_bytes(rehash_metadata(shrink_input(Path(model["so"]).read_bytes())))
    # The input now has the recorded shape [1, 3, 4, 8].
    x = tmp_path / "small.npy"
    np.save(x, np.load(model["x"])[:, :, :4, :])
    assert_refused(
        model | {"x": x},
        so,
        "the model metadata's shapes differ from the shapes the library's code was compiled for",
    )


def test_metadata_with_another_rank_is_refused(model: dict, tmp_path: Path) -> None:
    """The input's recorded shape [1, 3, 8, 8] edited to [1, 3, 8] (its
    vectors' lengths set to 3, in place) and the hash patched: a descriptor
    of rank 3 would put its strides where the code reads sizes. The ranks
    compiled into the code refuse it before any descriptor is built."""
    so = tmp_path / "rank3.so"

    def rank3(patched: bytearray, offset: int) -> None:
        struct.pack_into("<I", patched, offset, 3)

    so.write_bytes(rehash_metadata(edit_input_shape(Path(model["so"]).read_bytes(), rank3)))
    assert dump(so)["inputs"] == [{"dtype": "F32", "shape": [1, 3, 8]}]
    x = tmp_path / "rank3.npy"
    np.save(x, np.load(model["x"])[:, :, 0, :])
    assert_refused(
        model | {"x": x},
        so,
        "the model metadata's \"forward\" descriptor 0 has rank 3, the library's code was compiled for rank 4",
    )


def test_metadata_failing_verification_is_refused(model: dict, tmp_path: Path) -> None:
    """A metadata the FlatBuffers verifier rejects (its root offset pointing
    past its end), with the hash patched: the library verifies its artifact
    before reading any field."""
    data = bytearray(Path(model["so"]).read_bytes())
    start, end = metadata_span(bytes(data))
    struct.pack_into("<I", data, start, end - start + 8)
    so = tmp_path / "unverified.so"
    so.write_bytes(rehash_metadata(bytes(data)))
    assert_refused(
        model,
        so,
        "corrupt model metadata: invalid gpuopt artifact: the buffer does not verify against the schema "
        "(truncated or damaged)",
    )


def test_metadata_size_beyond_its_section_is_refused(model: dict, tmp_path: Path) -> None:
    """A note claiming more metadata than its section holds: the library
    hashes no byte beyond the section (a read past it could fault), and the
    dump names the sizes."""
    data = bytearray(Path(model["so"]).read_bytes())
    struct.pack_into("<Q", data, note_offset(bytes(data)) + 16, 1 << 40)
    so = tmp_path / "oversized.so"
    so.write_bytes(bytes(data))
    assert_refused(model, so, "corrupt model metadata: it does not match the checksum")
    proc = run_dump(so)
    assert proc.returncode == 1, proc.stderr
    message = f"{so}: corrupt model metadata: its note gives {1 << 40} bytes, the gpuopt_model section holds"
    assert message in proc.stderr, proc.stderr


def test_another_metadata_version_is_refused(model: dict, tmp_path: Path) -> None:
    """A note of metadata version 1 (JSON text, before the artifact schema):
    the dump, which reads the bytes itself, names both versions; the
    library, whose own code wrote version 2, refuses its edited note."""
    data = bytearray(Path(model["so"]).read_bytes())
    struct.pack_into("<I", data, note_offset(bytes(data)) + 12, 1)
    so = tmp_path / "md1.so"
    so.write_bytes(bytes(data))
    proc = run_dump(so)
    assert proc.returncode == 1, proc.stderr
    assert (
        f"gpuopt-run: error: {so} has model metadata version 1, this runtime reads version 2; "
        "recompile it with this gpuopt-compile\n" == proc.stderr
    ), proc.stderr
    assert_refused(model, so, "corrupt model metadata: it does not match the checksum")


def test_wrong_abi_version_is_refused_before_loading(model: dict, tmp_path: Path) -> None:
    data = bytearray(Path(model["so"]).read_bytes())
    struct.pack_into("<I", data, note_offset(data) + 8, 99)
    so = tmp_path / "v99.so"
    so.write_bytes(bytes(data))
    assert_refused(model, so, f"{so} has model ABI version 99, this runtime supports version 3")


def test_reader_limits_apply_to_the_library(model: dict) -> None:
    """--max-tensors, --max-header-bytes and --max-rank bound the weights
    file and the library's own metadata (they were ignored on this path)."""
    assert_refused(
        model, model["so"], "the model has 6 parameters, more than the limit of 1 tensors", "max_tensors=1"
    )
    assert_refused(model, model["so"], "exceeds the limit of 64 bytes", "max_header_bytes=64")
    assert_refused(model, model["so"], "has rank 4, more than the limit of 2", "max_rank=2")


@pytest.fixture(scope="module")
def cuda_model(model: dict) -> Path:
    out = model["dir"] / "m.gpuopt"
    proc = subprocess.run(
        [str(tool("gpuopt-compile")), str(model["dir"] / "m.mlir"), "--target=cuda", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def cuda_run(model: dict, artifact: Path, inspect: bool) -> subprocess.CompletedProcess:
    args = ["--inspect"] if inspect else [f"--weights={model['weights']}", f"--input=@{model['x']}"]
    return subprocess.run(
        [str(CUDA_RUN), str(artifact), *args], capture_output=True, text=True, check=False, timeout=HANG
    )


def assert_cuda_refused(model: dict, artifact: Path, message: str) -> None:
    """Refused by --inspect and by a run alike, before any driver call (this
    machine needs no GPU for it: exit 1, not the no-driver exit 2)."""
    for inspect in (True, False):
        proc = cuda_run(model, artifact, inspect)
        assert proc.returncode == 1, f"{artifact} (inspect={inspect}): exit {proc.returncode}\n{proc.stderr}"
        assert message in proc.stderr, proc.stderr


def rewrite_plan(artifact: Path, out: Path, edit: object) -> Path:
    """A copy of the CUDA artifact with `edit(plan)` applied to its CudaProgram."""
    return cuda_artifact.rewrite(artifact, out, lambda model: edit(cuda_artifact.program(model)))


@needs_cuda
def test_cuda_plan_checked_against_kernel_signatures(model: dict, cuda_model: Path, tmp_path: Path) -> None:
    header = cuda_artifact.program(cuda_artifact.to_json(cuda_model))
    index, step = next((i, s) for i, s in enumerate(header["run"]) if len(s["args"]) >= 2)
    kernel = header["kernels"][step["kernel"]]
    assert len(kernel["args"]) == len(step["args"]), (kernel, step)
    where = f"run[{index}] (kernel '{kernel['name']}'"

    def drop_arg(h: dict) -> None:
        h["run"][index]["args"].pop()

    def swap_args(h: dict) -> None:
        # A buffer of another size in place of the first argument.
        args = h["run"][index]["args"]
        size = h["buffers"][args[0]]["bytes"]
        args[0] = next(i for i, b in enumerate(h["buffers"]) if b["bytes"] != size)

    def outside_arena(h: dict) -> None:
        h["buffers"][step["args"][0]]["offset"] = h["arena_bytes"]

    def offset_overflow(h: dict) -> None:
        h["buffers"][step["args"][0]]["offset"] = (1 << 64) - 256

    buffer = header["buffers"][step["args"][0]]
    outside = f"buffers[{step['args'][0]}]: {buffer['bytes']} bytes at offset {{}} lie outside the arena of "
    outside += f"{header['arena_bytes']} bytes (argument 0 of run["
    cases = {
        "count": (drop_arg, f"{where}"),
        "size": (swap_args, f"{where}"),
        "arena": (outside_arena, outside.format(header["arena_bytes"])),
        "overflow": (offset_overflow, outside.format((1 << 64) - 256)),
    }
    for name, (edit, message) in cases.items():
        bad = rewrite_plan(cuda_model, tmp_path / f"{name}.gpuopt", edit)
        assert_cuda_refused(model, bad, message)
    proc = cuda_run(model, tmp_path / "count.gpuopt", inspect=True)
    assert f"{len(step['args']) - 1} arguments, the kernel takes {len(step['args'])}" in proc.stderr, (
        proc.stderr
    )
    proc = cuda_run(model, tmp_path / "size.gpuopt", inspect=True)
    assert "argument 0 is buffers[" in proc.stderr and "the kernel takes F32" in proc.stderr, proc.stderr


@needs_cuda
@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_cuda_artifact_not_a_regular_file(model: dict, tmp_path: Path, kind: str) -> None:
    artifact = make_special(tmp_path / f"{kind}.gpuopt", kind)
    assert_cuda_refused(model, artifact, f"{artifact}: not a regular file")
