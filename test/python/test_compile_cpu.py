"""Compiled CPU models: gpuopt-compile --target=cpu, the C ABI, gpuopt.compiled.

Every zoo model is exported at 32x32 with random weights and statistics,
compiled to a shared library after --gpuopt-optimize and (Rolling-UNet only
with GPUOPT_SLOW_TESTS=1) as exported, run via
gpuopt.compiled.CompiledModel (ctypes) and via `gpuopt-run model.so`, and
compared with PyTorch eager (relative L2 error <= 1e-4). Bad libraries,
weights and inputs give a located message (exit code 1 or a Python
exception), never a crash. A C program linked only against a model library
proves the runtime needs no MLIR.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from safetensors.numpy import load_file, save_file
from test_artifacts import dump, metadata_span, rehash_metadata
from torch import nn

import gpuopt
from gpuopt import models
from gpuopt.compiled import (
    CompiledModel,
    CompiledModelError,
    ModelOptions,
    compile_model,
    runtime_library,
    set_num_threads,
)
from gpuopt.randomize import randomize
from gpuopt.tools import REPO_ROOT, ToolError, tool

REL_L2 = 1e-4
HERE = Path(__file__).resolve().parent


def run_so(
    so: Path, weights: Path, *inputs: Path, extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """gpuopt-run on a compiled library; the output goes next to the first input."""
    return subprocess.run(
        [
            str(tool("gpuopt-run")),
            str(so),
            f"--weights={weights}",
            *[f"--input=@{p}" for p in inputs],
            f"--output=@{inputs[0].parent / 'y.npy'}",
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
    )


# As exported, Rolling-UNet holds 2048 roll/slice/concat ops: LLVM -O3 on their
# naive loops takes ~15 s (S) to minutes (L) on 2 cores, and the same lowering
# is covered op by op (test_reference_ops.py). GPUOPT_SLOW_TESTS=1 adds them.
SLOW = os.environ.get("GPUOPT_SLOW_TESTS") == "1"
ZOO = [(name, SLOW or not name.startswith("rolling_unet")) for name in models.names()]


@pytest.mark.parametrize(("name", "as_exported"), ZOO, ids=[n for n, _ in ZOO])
def test_zoo_model_compiled(name: str, as_exported: bool, tmp_path: Path) -> None:
    model = randomize(models.build(name).eval(), seed=11)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(5))
    weights = tmp_path / "m.safetensors"
    gpuopt.export(model, (x,), tmp_path / "m.mlir", weights)
    np.save(tmp_path / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    for pipeline in ([None] if as_exported else []) + ["gpuopt-optimize"]:
        what = f"{name} compiled {'after ' + pipeline if pipeline else 'as exported'}"
        so = compile_model(tmp_path / "m.mlir", tmp_path / f"{pipeline or 'm'}.so", pipeline=pipeline)
        # Two inferences on different inputs, both checked: a forward that
        # writes into a weight, a load-time result or its input would pass a
        # single run.
        x2 = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(6))
        with torch.no_grad():
            expected2 = model(x2).numpy()
        with CompiledModel(so, weights) as compiled:
            assert compiled.input_shapes == [(1, 3, 32, 32)]
            assert compiled.output_shapes == [expected.shape]
            (actual,) = compiled.run(x.numpy())
            (actual2,) = compiled.run(x2.numpy())
            (again,) = compiled.run(x.numpy())
        for got, want, run in ((actual, expected, 1), (actual2, expected2, 2), (again, expected, 3)):
            err = rel_l2(got, want)
            assert err <= REL_L2, f"{what}, CompiledModel run {run}: relative L2 error {err:.3e}"
        proc = run_so(so, weights, tmp_path / "x.npy")
        assert proc.returncode == 0, proc.stderr
        err = rel_l2(np.load(tmp_path / "y.npy"), expected)
        assert err <= REL_L2, f"{what}, gpuopt-run: relative L2 error {err:.3e}"


class Tiny(nn.Module):
    """Conv-BN-ReLU plus a residual input: load-time folding, two inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x))) + r


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A compiled Tiny (after --gpuopt-optimize: BatchNorm folded at load time)."""
    out = tmp_path_factory.mktemp("tiny")
    model = randomize(Tiny().eval(), seed=3)
    gen = torch.Generator().manual_seed(4)
    x, r = torch.randn(1, 3, 8, 8, generator=gen), torch.randn(1, 4, 8, 8, generator=gen)
    gpuopt.export(model, (x, r), out / "m.mlir", out / "m.safetensors")
    np.save(out / "x.npy", x.numpy())
    np.save(out / "r.npy", r.numpy())
    with torch.no_grad():
        expected = model(x, r).numpy()
    so = compile_model(out / "m.mlir", out / "m.so", pipeline="gpuopt-optimize")
    return {"dir": out, "so": so, "weights": out / "m.safetensors", "x": x, "r": r, "expected": expected}


def test_two_inputs_threads_and_repeated_runs(tiny: dict) -> None:
    set_num_threads(1)
    try:
        with CompiledModel(tiny["so"], tiny["weights"], strict=True) as m:
            assert m.input_shapes == [(1, 3, 8, 8), (1, 4, 8, 8)]
            for _ in range(3):
                (y,) = m.run(tiny["x"].numpy(), tiny["r"].numpy())
                assert rel_l2(y, tiny["expected"]) <= REL_L2
    finally:
        set_num_threads(0)
    d = tiny["dir"]
    proc = run_so(tiny["so"], tiny["weights"], d / "x.npy", d / "r.npy", extra=("--runs=3",))
    assert proc.returncode == 0, proc.stderr
    assert "median of 3" in proc.stdout
    assert rel_l2(np.load(d / "y.npy"), tiny["expected"]) <= REL_L2


def abi_functions() -> set[str]:
    """The functions runtime/include/gpuopt/Runtime/ModelAbi.h declares: the one
    place the ABI is written down."""
    text = (REPO_ROOT / "runtime/include/gpuopt/Runtime/ModelAbi.h").read_text()
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.DOTALL)
    return set(re.findall(r"\b(gpuopt_\w+)\s*\(", code))


def exported_functions(lib: Path) -> set[str]:
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    # T, or W: the CPU kernels' definitions of the ModelAbi.h thread and ISA
    # functions are weak (libgpuopt_runtime.so links the kernels for the CUDA
    # emulator and defines those names itself).
    return {line.split()[-1] for line in nm.stdout.splitlines() if " T " in line or " W " in line}


def test_library_exports_only_the_abi_and_needs_no_mlir(tiny: dict) -> None:
    exported = exported_functions(tiny["so"])
    declared = abi_functions()
    assert {"gpuopt_model_run", "gpuopt_model_options_init"} <= declared, declared
    assert exported == declared, (
        f"exported, not in ModelAbi.h: {sorted(exported - declared)}; "
        f"in ModelAbi.h, not exported: {sorted(declared - exported)}"
    )
    ldd = subprocess.run(["ldd", str(tiny["so"])], capture_output=True, text=True, check=True).stdout
    assert "MLIR" not in ldd and "LLVM" not in ldd and "mlir" not in ldd, ldd


def test_runtime_library_exports_only_the_abi_and_needs_no_mlir() -> None:
    """libgpuopt_runtime.so implements the same header for any artifact."""
    lib = runtime_library()
    exported = exported_functions(lib)
    declared = abi_functions()
    assert exported == declared, (
        f"exported, not in ModelAbi.h: {sorted(exported - declared)}; "
        f"in ModelAbi.h, not exported: {sorted(declared - exported)}"
    )
    ldd = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "MLIR" not in ldd and "LLVM" not in ldd and "mlir" not in ldd, ldd


def test_model_library_binds_its_own_abi(tiny: dict) -> None:
    """A model library and libgpuopt_runtime.so define the same names: the
    library is linked with -Bsymbolic, so its calls among them stay inside
    it whatever else the process has loaded (no dynamic relocation names a
    gpuopt_ symbol)."""
    dynamic = subprocess.run(["readelf", "-d", str(tiny["so"])], capture_output=True, text=True, check=True)
    assert "SYMBOLIC" in dynamic.stdout, dynamic.stdout
    relocs = subprocess.run(
        ["readelf", "-r", "-W", str(tiny["so"])], capture_output=True, text=True, check=True
    )
    bound = [line for line in relocs.stdout.splitlines() if " gpuopt_" in line]
    assert not bound, bound


def test_model_library_next_to_a_global_runtime(tiny: dict) -> None:
    """A process with libgpuopt_runtime.so loaded RTLD_GLOBAL runs a model
    library loaded directly (CompiledModel) and the same library through the
    runtime (gpuopt_model_create with artifact_path), with the same result."""
    script = f"""
import ctypes, os, sys
import numpy as np
from gpuopt.compiled import CompiledModel, ModelOptions, ReaderLimits, runtime_library
rt = ctypes.CDLL(str(runtime_library()), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
x, r = np.load({str(tiny["dir"] / "x.npy")!r}), np.load({str(tiny["dir"] / "r.npy")!r})
with CompiledModel({str(tiny["so"])!r}, {str(tiny["weights"])!r}, strict=True) as m:
    (direct,) = m.run(x, r)
p = ctypes.c_void_p
rt.gpuopt_model_create.restype = p
rt.gpuopt_model_create.argtypes = [ctypes.POINTER(ModelOptions), ctypes.c_char_p, ctypes.c_size_t]
rt.gpuopt_model_run.argtypes = [p, p, p, ctypes.c_char_p, ctypes.c_size_t]
rt.gpuopt_model_destroy.argtypes = [p]
rt.gpuopt_cpu_kernel_isa.restype = ctypes.c_char_p
options = ModelOptions()
rt.gpuopt_model_options_init(ctypes.byref(options))
assert options.struct_size == ctypes.sizeof(ModelOptions), options.struct_size
options.artifact_path = {str(tiny["so"])!r}.encode()
options.weights_path = {str(tiny["weights"])!r}.encode()
limits = ReaderLimits()
options.limits = ctypes.pointer(limits)
err = ctypes.create_string_buffer(1024)
model = rt.gpuopt_model_create(ctypes.byref(options), err, 1024)
assert model, err.value
y = np.empty_like(direct)
ins = (p * 2)(x.ctypes.data, r.ctypes.data)
outs = (p * 1)(y.ctypes.data)
assert rt.gpuopt_model_run(model, ins, outs, err, 1024) == 0, err.value
rt.gpuopt_model_destroy(model)
np.save(sys.argv[1], direct)
np.save(sys.argv[2], y)
print("isa", rt.gpuopt_cpu_kernel_isa().decode())
"""
    d = tiny["dir"]
    proc = subprocess.run(
        [sys.executable, "-c", script, str(d / "direct.npy"), str(d / "runtime.npy")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^isa (avx512|avx2|generic)$", proc.stdout, re.MULTILINE), proc.stdout
    direct, through = np.load(d / "direct.npy"), np.load(d / "runtime.npy")
    assert rel_l2(direct, tiny["expected"]) <= REL_L2
    assert np.array_equal(direct, through)


def test_batch_norm_folding_runs_at_load_time(tiny: dict) -> None:
    """The metadata the object carries (runtime/include/gpuopt/Runtime/CompiledModel.h):
    the initializer reads the six conv/BN parameters and returns the folded
    weight and bias; the forward function reads only those and the inputs."""
    meta = dump(tiny["so"])
    assert meta["entry"] == "forward"
    program = meta["program"]
    assert [a["kind"] for a in program["init"]["args"]] == ["Param"] * 6
    assert [r["shape"] for r in program["init"]["results"]] == [[4, 3, 3, 3], [4]]
    assert [a["kind"] for a in program["forward"]["args"]] == ["Input", "Input", "Derived", "Derived"]


def build_abi_main(cc: str, exe: Path, lib: Path) -> Path:
    """test/python/model_abi_main.c linked against `lib` alone."""
    subprocess.run(
        [
            cc,
            "-std=c99",
            "-Wall",
            "-Werror",
            f"-I{REPO_ROOT / 'runtime' / 'include'}",
            str(HERE / "model_abi_main.c"),
            str(lib),
            f"-Wl,-rpath,{lib.parent}",
            "-o",
            str(exe),
        ],
        check=True,
    )
    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, check=True).stdout
    assert "MLIR" not in ldd and "LLVM" not in ldd, ldd
    return exe


@pytest.mark.parametrize("through", ["model", "runtime"])
def test_c_program_linked_only_against_the_model(tiny: dict, tmp_path: Path, through: str) -> None:
    """test/python/model_abi_main.c: plain C, the ABI header and model.so, or
    libgpuopt_runtime.so loading model.so."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    tiny["x"].numpy().tofile(tmp_path / "x.bin")
    tiny["r"].numpy().tofile(tmp_path / "r.bin")
    lib = tiny["so"] if through == "model" else runtime_library()
    exe = build_abi_main(cc, tmp_path / "main", lib)
    artifact = [] if through == "model" else [f"--artifact={tiny['so']}"]
    proc = subprocess.run(
        [
            str(exe),
            *artifact,
            str(tiny["weights"]),
            str(tmp_path / "x.bin"),
            str(tmp_path / "r.bin"),
            str(tmp_path / "y.bin"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "NULL options: gpuopt_model_create: options is NULL" in proc.stdout
    needs = "this library needs" if through == "model" else "this runtime needs"
    assert (
        f"small options: gpuopt_model_create: options.struct_size is 4, {needs} at least "
        f"{ctypes.sizeof(ModelOptions)} "
        "(fill it with gpuopt_model_options_init)" in proc.stdout
    ), proc.stdout
    assert "NULL inputs: gpuopt_model_run: inputs or outputs is NULL" in proc.stdout
    assert "inputs 2, outputs 1, output 0: [1, 4, 8, 8]" in proc.stdout
    y = np.fromfile(tmp_path / "y.bin", dtype=np.float32).reshape(tiny["expected"].shape)
    assert rel_l2(y, tiny["expected"]) <= REL_L2
    # Errors come back through the ABI too.
    proc = subprocess.run(
        [str(exe), *artifact, str(tmp_path / "none.safetensors"), "x", "r", "y"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "none.safetensors" in proc.stderr
    # A model library loads only itself; the runtime needs an artifact.
    proc = subprocess.run(
        [
            str(exe),
            *(["--artifact=other.so"] if through == "model" else []),
            str(tiny["weights"]),
            "x",
            "r",
            "y",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    if through == "model":
        assert (
            "error: gpuopt_model_create: artifact_path is 'other.so', but this is a compiled model "
            "library, which loads only itself (artifact_path must be NULL); load other artifacts "
            "with libgpuopt_runtime.so\n" == proc.stderr
        ), proc.stderr
    else:
        assert (
            "error: gpuopt_model_create: libgpuopt_runtime.so needs options.artifact_path (a model "
            "library .so or a CUDA artifact .gpuopt)\n" == proc.stderr
        ), proc.stderr


def write_fake_library(path: Path, body: str) -> Path:
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = path.with_suffix(".c")
    src.write_text(body)
    subprocess.run([cxx, "-x", "c", "-shared", "-fPIC", str(src), "-o", str(path)], check=True)
    return path


def library_cases(tmp_path: Path) -> list[tuple[Path, str]]:
    corrupt = tmp_path / "corrupt.so"
    corrupt.write_bytes(b"\x7fELF" + b"\0" * 60)
    truncated = tmp_path / "notelf.so"
    truncated.write_text("not a library")
    other = write_fake_library(tmp_path / "other.so", "int f(void) { return 0; }\n")
    # The ABI version is read from the note (CompiledModel.h) before dlopen.
    future = write_fake_library(
        tmp_path / "future.so",
        "struct note { char magic[8]; unsigned abi, md; unsigned long long size, hash; };\n"
        '__attribute__((section("gpuopt_model"), used)) const struct note n = {"GPUOPTMD", 99, 1, 0, 0};\n',
    )
    return [
        (tmp_path / "missing.so", "cannot load"),
        (corrupt, "cannot load"),
        (truncated, "cannot load"),
        (other, "is not a gpuopt model library"),
        (future, "has model ABI version 99"),
    ]


def test_bad_libraries(tiny: dict, tmp_path: Path) -> None:
    for so, message in library_cases(tmp_path):
        with pytest.raises(CompiledModelError, match=message):
            CompiledModel(so, tiny["weights"])
        proc = run_so(so, tiny["weights"], tiny["dir"] / "x.npy", tiny["dir"] / "r.npy")
        assert proc.returncode == 1, f"{so.name}: {proc.stderr}"
        assert "gpuopt-run: error:" in proc.stderr and message in proc.stderr, proc.stderr


def weight_cases(tiny: dict, tmp_path: Path) -> list[tuple[Path, bool, str]]:
    good = load_file(str(tiny["weights"]))
    name = min(good)
    cases = []

    def save(tag: str, tensors: dict[str, np.ndarray]) -> Path:
        path = tmp_path / f"{tag}.safetensors"
        save_file(tensors, str(path))
        return path

    missing = {k: v for k, v in good.items() if k != name}
    cases.append((save("missing", missing), False, f"parameter '{name}' is missing"))
    shape = dict(good, **{name: np.zeros((2, 2), np.float32)})
    cases.append((save("shape", shape), False, f"parameter '{name}' has shape \\[2, 2\\], the model expects"))
    dtype = dict(good, **{name: good[name].astype(np.float16)})
    cases.append((save("dtype", dtype), False, f"parameter '{name}' is F16; compiled models take F32"))
    extra = dict(good, unused=np.zeros(3, np.float32))
    cases.append((save("extra", extra), True, "1 tensor\\(s\\) are not used by the model \\('unused'\\)"))
    cases.append((tmp_path / "none.safetensors", False, "none.safetensors"))
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x05\0\0\0\0\0\0\0{bad}")
    cases.append((garbage, False, "garbage.safetensors"))
    return cases


def test_bad_weights(tiny: dict, tmp_path: Path) -> None:
    d = tiny["dir"]
    for weights, strict, message in weight_cases(tiny, tmp_path):
        with pytest.raises(CompiledModelError, match=message):
            CompiledModel(tiny["so"], weights, strict=strict)
        extra = ("--strict-weights",) if strict else ()
        proc = run_so(tiny["so"], weights, d / "x.npy", d / "r.npy", extra=extra)
        assert proc.returncode == 1, f"{weights.name}: {proc.stderr}"
        assert "gpuopt-run: error:" in proc.stderr, proc.stderr
    proc = subprocess.run(
        [str(tool("gpuopt-run")), str(tiny["so"]), f"--input=@{d / 'x.npy'}", f"--input=@{d / 'r.npy'}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "the model has 6 parameters; no weights file given" in proc.stderr
    # Without --strict-weights, unused tensors are ignored.
    with CompiledModel(tiny["so"], tmp_path / "extra.safetensors") as m:
        m.run(tiny["x"].numpy(), tiny["r"].numpy())


def test_bad_inputs(tiny: dict, tmp_path: Path) -> None:
    d = tiny["dir"]
    with CompiledModel(tiny["so"], tiny["weights"]) as m:
        with pytest.raises(
            ValueError, match=r"input 1 has shape \(1, 4, 4, 4\), the model expects \(1, 4, 8, 8\)"
        ):
            m.run(tiny["x"].numpy(), np.zeros((1, 4, 4, 4), np.float32))
        with pytest.raises(ValueError, match="the model takes 2 input"):
            m.run(tiny["x"].numpy())
    with pytest.raises(CompiledModelError, match="closed"):
        m.run(tiny["x"].numpy(), tiny["r"].numpy())
    np.save(tmp_path / "small.npy", np.zeros((1, 4, 4, 4), np.float32))
    np.save(tmp_path / "f64.npy", np.zeros((1, 4, 8, 8), np.float64))
    cases = [
        (
            (d / "x.npy", tmp_path / "small.npy"),
            "input 1 has shape [1, 4, 4, 4], the model expects [1, 4, 8, 8]",
        ),
        ((d / "x.npy", tmp_path / "f64.npy"), "unsupported dtype '<f8'"),
        ((d / "x.npy",), "takes 2 input(s) but 1 --input given"),
        ((d / "x.npy", d / "r.npy", d / "r.npy"), "takes 2 input(s) but 3 --input given"),
        ((d / "x.npy", tmp_path / "none.npy"), "none.npy"),
    ]
    for inputs, message in cases:
        proc = run_so(tiny["so"], tiny["weights"], *inputs)
        assert proc.returncode == 1, proc.stderr
        assert message in proc.stderr, proc.stderr
    for extra, message in [
        (("--backend=reference",), "is a compiled model library; --backend=reference does not apply"),
        (("--runs=0",), "--runs must be at least 1"),
        ((f"--output=@{tmp_path / 'y2.npy'}",), "returns 1 result(s) but 2 --output given"),
    ]:
        proc = run_so(tiny["so"], tiny["weights"], d / "x.npy", d / "r.npy", extra=extra)
        assert proc.returncode == 1, proc.stderr
        assert message in proc.stderr, proc.stderr


def test_compile_model_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @forward(\n")
    with pytest.raises(ToolError, match="bad.mlir:1:20: error: expected non-function type"):
        compile_model(bad, tmp_path / "bad.so")
    with pytest.raises(ToolError, match="unknown target 'tpu'"):
        compile_model(bad, tmp_path / "bad.so", target="tpu")


def test_model_without_parameters(tmp_path: Path, rng: np.random.Generator) -> None:
    graph = tmp_path / "relu.mlir"
    graph.write_text(
        "func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        "  %y = seg.relu %x : tensor<2x3xf32>\n"
        "  return %y : tensor<2x3xf32>\n"
        "}\n"
    )
    so = compile_model(graph, tmp_path / "relu.so")
    x = rng.standard_normal((2, 3)).astype(np.float32)
    with CompiledModel(so, None) as m:
        (y,) = m.run(x)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_library_records_and_checks_cpu_features(tiny: dict, tmp_path: Path) -> None:
    """The library lists the host's instruction-set extensions it was compiled
    for and refuses to load where one cannot be checked or is missing (instead
    of dying with SIGILL). Patched here: one recorded name replaced by a name
    of the same length that no runtime knows."""
    data = Path(tiny["so"]).read_bytes()
    features = [f.encode() for f in dump(tiny["so"])["program"]["cpu_features"]]
    assert b"sse4.2" in features or not features, features
    if not features:
        pytest.skip("the build machine records no checkable CPU feature")
    # A FlatBuffers string as stored: its uint32 length, the bytes, a NUL.
    victim = struct.pack("<I", len(features[0])) + features[0] + b"\0"
    fake = struct.pack("<I", len(features[0])) + b"z" * len(features[0]) + b"\0"
    start, end = metadata_span(data)
    assert data[start:end].count(victim) == 1, features[0]
    patched = tmp_path / "patched.so"
    # With the metadata hash fixed up, as a library compiled for that feature.
    patched.write_bytes(rehash_metadata(data[:start] + data[start:end].replace(victim, fake) + data[end:]))
    with pytest.raises(CompiledModelError, match="needs CPU feature 'z+', which this runtime cannot check"):
        CompiledModel(patched, tiny["weights"])
