"""Compile a PyTorch module in one call, and the ``torch.compile`` backend "gpuopt".

::

    import gpuopt

    fast = gpuopt.compile(model, (x,))             # target="cpu", --gpuopt-optimize
    y = fast(x)                                    # torch tensors in, torch tensors out

    fast = torch.compile(model, backend="gpuopt")  # the same, behind Dynamo

:func:`compile` exports the module with the exporter of ``gpuopt.export``
(the TorchFunctionMode capture), compiles the graph with ``gpuopt-compile``
and loads the artifact with :class:`gpuopt.compiled.CompiledModel`. The
module is put in eval mode (a module in training mode is switched, with a
warning on the "gpuopt" logger): the artifact is an inference graph.

Artifacts are cached under ``cache_dir`` (default ``$XDG_CACHE_HOME/gpuopt``
or ``~/.cache/gpuopt``), keyed by a SHA-256 over the exported graph's text,
the weights' layout (names, shapes, dtypes), the pipeline, the target,
``gpuopt.__version__``, the contents of ``gpuopt-compile`` and of the model
runtime archives it links into a CPU library, and (``target="cpu"``, whose
libraries are built for this CPU) the host CPU's model and feature flags.
The weights' values are not in the key: a weights file is written per call
of :func:`compile` and bound when the artifact is loaded.

The returned :class:`CompiledCallable` takes tensors of the example's rank.
A call with other shapes (another batch size) exports and compiles another
artifact for them (cached too): a shape guard, never the wrong artifact.
Contiguous float32 CPU inputs reach the model without a copy; other floating
dtypes and non-contiguous tensors are converted once; outputs are the
runtime's arrays wrapped by ``torch.from_numpy``, without a copy.

The backend (:func:`dynamo_backend`, registered as "gpuopt") runs the same
exporter on Dynamo's FX graph. Parameters and buffers that Dynamo lifts to
graph inputs are bound by name as weights (``conv.weight``, from Dynamo's
source of the tensor), and rebound if they are changed between calls. A
graph the capture cannot handle runs eagerly, with the reason logged as a
warning on the "gpuopt" logger.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.utils import _pytree as pytree

import gpuopt
from gpuopt._atomic import atomic_output, write_text
from gpuopt.capture import Captured, CaptureError
from gpuopt.compiled import CompiledModel, compile_model
from gpuopt.export import export
from gpuopt.tools import DEFAULT_DEVICES, ToolError, build_dir, tool

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["CompiledCallable", "CudaOptions", "compile", "default_cache_dir", "dynamo_backend"]

log = logging.getLogger("gpuopt")

TARGETS = ("cpu", "cuda")
#: ``gpu_conv``: gpuopt-compile's --gpu-conv modes (docs/CUDABackend.md).
GPU_CONV_MODES = ("generated", "library", "auto")
#: ``gpu_precision``: the arithmetic of the library steps.
GPU_PRECISIONS = ("fp32", "tf32")
_CUDA_ARCH = re.compile(r"sm_[0-9]+(,sm_[0-9]+)*")
_ARTIFACT_NAME = {"cpu": "model.so", "cuda": "model.gpuopt"}
# Bumped when what a cache entry holds, or how its key is made, changes.
_CACHE_FORMAT = 2
# The model runtime archives gpuopt-compile links into a CPU library
# (GPUOPT_MODEL_RUNTIME_ARCHIVES of lib/Target/Cpu/CMakeLists.txt).
_RUNTIME_ARCHIVES = ("libGpuoptModelRuntime.a", "libGpuoptCpuKernels.a", "libGpuoptRuntime.a")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/gpuopt``, or ``~/.cache/gpuopt`` when XDG_CACHE_HOME
    is unset or not absolute (the XDG spec ignores a relative one)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "gpuopt"


# ---------------------------------------------------------------------------
# The cache key
# ---------------------------------------------------------------------------

_file_digests: dict[tuple[str, int, int, int], str] = {}


def _file_digest(path: Path) -> str:
    """SHA-256 of a file's contents, remembered per (path, inode, size, mtime)."""
    st = path.stat()
    memo = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns)
    if memo not in _file_digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        _file_digests[memo] = h.hexdigest()
    return _file_digests[memo]


def _toolchain_identity(target: str) -> dict[str, str]:
    """What makes gpuopt-compile produce an artifact: its binary and, for a
    CPU library, the runtime archives it links in (by content)."""
    files = {"gpuopt-compile": tool("gpuopt-compile")}
    if target == "cpu":
        for name in _RUNTIME_ARCHIVES:
            path = build_dir() / "lib" / name
            if path.is_file():
                files[name] = path
    return {name: _file_digest(path) for name, path in files.items()}


_host_cpu: str | None = None


def _host_cpu_identity() -> str:
    """The host CPU's vendor, model and feature flags (a ``--cpu=native``
    library runs on CPUs that have its features only)."""
    global _host_cpu
    if _host_cpu is None:
        fields: dict[str, str] = {}
        with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("vendor_id", "model name", "flags", "Features", "CPU implementer", "CPU part"):
                    fields[key] = " ".join(value.split())
        fields["machine"] = platform.machine()
        _host_cpu = json.dumps(fields, sort_keys=True)
    return _host_cpu


def weights_layout(params: dict[str, torch.Tensor]) -> list[list[Any]]:
    """The weights' names, shapes and dtypes, sorted by name: what an artifact
    depends on (their values are bound at load)."""
    return [[name, list(t.shape), str(t.dtype).removeprefix("torch.")] for name, t in sorted(params.items())]


def cache_key(
    mlir: str,
    layout: list[list[Any]],
    pipeline: str | None,
    target: str,
    cuda: CudaOptions | None = None,
) -> tuple[str, dict]:
    """The artifact's key (hex SHA-256) and the record it is the hash of."""
    record: dict[str, Any] = {
        "format": _CACHE_FORMAT,
        "graph_sha256": hashlib.sha256(mlir.encode()).hexdigest(),
        "weights_layout": layout,
        "pipeline": pipeline,
        "target": target,
        "gpuopt_version": gpuopt.__version__,
        "toolchain": _toolchain_identity(target),
        # The flags the artifact is compiled with (the device it is loaded on
        # is not: only whether it carries the emulator's host image).
        "compile_flags": cuda.compile_flags() if cuda is not None else [],
    }
    if target == "cpu":
        record["host_cpu"] = _host_cpu_identity()
    if cuda is not None and cuda.gpu_conv == "auto":
        # --gpu-conv=auto routes by the device models (data/devices.json).
        devices = DEFAULT_DEVICES
        record["device_models_sha256"] = (
            hashlib.sha256(devices.read_bytes()).hexdigest() if devices.is_file() else None
        )
    text = json.dumps(record, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest(), record


# ---------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CudaOptions:
    """The ``target="cuda"`` settings of :func:`compile` (checked).

    ``device``: the GPU ordinal the artifact runs on (None: 0), or
    ``"emulate"``: the host emulator (docs/CUDABackend.md, "Emulation on the
    host"; the artifact then also carries the kernels built for this CPU).
    ``cuda_arch``: gpuopt-compile's ``--cuda-arch`` (None: its default).
    ``gpu_conv`` / ``gpu_precision``: ``--gpu-conv`` / ``--gpu-precision``.
    ``gpu_conv_device``: ``--gpu-conv-device`` (``gpu_conv="auto"`` only;
    None: gpuopt-compile's default model).
    """

    device: int | str | None = None
    cuda_arch: str | None = None
    gpu_conv: str = "generated"
    gpu_precision: str = "fp32"
    gpu_conv_device: str | None = None

    def compile_flags(self) -> list[str]:
        """The gpuopt-compile flags of these settings."""
        flags = [f"--gpu-conv={self.gpu_conv}", f"--gpu-precision={self.gpu_precision}"]
        if self.cuda_arch is not None:
            flags.insert(0, f"--cuda-arch={self.cuda_arch}")
        if self.gpu_conv_device is not None:
            flags.append(f"--gpu-conv-device={self.gpu_conv_device}")
        if self.device == "emulate":
            flags.append("--cuda-host-image")
        return flags


# Run in a child process (local_cuda_arch): prints sm_NN of GPU argv[1], or
# nothing. CUdevice_attribute 75 / 76: the compute capability's major / minor.
_CUDA_ARCH_QUERY = """
import ctypes, sys
try:
    lib = ctypes.CDLL("libcuda.so.1")
except OSError:
    sys.exit(0)
dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
try:
    ok = (
        lib.cuInit(0) == 0
        and lib.cuDeviceGet(ctypes.byref(dev), ctypes.c_int(int(sys.argv[1]))) == 0
        and lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) == 0
        and lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) == 0
    )
except AttributeError:
    sys.exit(0)
if ok:
    print(f"sm_{major.value}{minor.value}")
"""


@functools.cache
def local_cuda_arch(ordinal: int) -> str | None:
    """``sm_NN`` of the GPU ``ordinal`` as the NVIDIA driver (libcuda)
    reports it, or None where there is no driver or no such GPU (the
    artifact's load then says so). Asked in a child process: this one never
    initializes CUDA (a process that forks after that cannot use CUDA in
    its children)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CUDA_ARCH_QUERY, str(ordinal)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    arch = proc.stdout.strip()
    return arch if proc.returncode == 0 and _CUDA_ARCH.fullmatch(arch) else None


def _gpu_device_models() -> list[str]:
    """The GPU models of data/devices.json (--gpu-conv-device's names)."""
    try:
        devices = json.loads(DEFAULT_DEVICES.read_text())["devices"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"cannot read the device models {DEFAULT_DEVICES}: {e}") from None
    return sorted(name for name, d in devices.items() if isinstance(d, dict) and d.get("kind") == "gpu")


def _check_cuda_options(
    target: str,
    device: Any,
    cuda_arch: Any,
    gpu_conv: Any,
    gpu_precision: Any,
    gpu_conv_device: Any = None,
) -> CudaOptions | None:
    """The checked CUDA settings, None for target="cpu" (where setting any of
    them is an error: they would silently do nothing). Without ``cuda_arch``
    a GPU ``device`` gets its own architecture (the driver's compute
    capability) where the driver reports one."""
    if target != "cuda":
        given = [
            name
            for name, value, default in (
                ("device", device, None),
                ("cuda_arch", cuda_arch, None),
                ("gpu_conv", gpu_conv, "generated"),
                ("gpu_precision", gpu_precision, "fp32"),
                ("gpu_conv_device", gpu_conv_device, None),
            )
            if value != default
        ]
        if given:
            raise ValueError(f"{', '.join(given)} apply to target='cuda', not target={target!r}")
        return None
    if isinstance(device, str):
        if device != "emulate":
            raise ValueError(f'device must be a GPU ordinal (>= 0), "emulate" or None, got {device!r}')
    elif device is not None and (isinstance(device, bool) or not isinstance(device, int) or device < 0):
        raise ValueError(f'device must be a GPU ordinal (>= 0), "emulate" or None, got {device!r}')
    if cuda_arch is not None and (not isinstance(cuda_arch, str) or not _CUDA_ARCH.fullmatch(cuda_arch)):
        raise ValueError(f"cuda_arch must be sm_NN[,sm_MM...] (e.g. 'sm_90') or None, got {cuda_arch!r}")
    if gpu_conv not in GPU_CONV_MODES:
        raise ValueError(f"gpu_conv must be one of {', '.join(map(repr, GPU_CONV_MODES))}, got {gpu_conv!r}")
    if gpu_precision not in GPU_PRECISIONS:
        raise ValueError(
            f"gpu_precision must be one of {', '.join(map(repr, GPU_PRECISIONS))}, got {gpu_precision!r}"
        )
    if gpu_conv_device is not None:
        if gpu_conv != "auto":
            raise ValueError(f"gpu_conv_device applies to gpu_conv='auto', not gpu_conv={gpu_conv!r}")
        models = _gpu_device_models()
        if gpu_conv_device not in models:
            raise ValueError(
                f"gpu_conv_device must be a GPU model of {DEFAULT_DEVICES.name} "
                f"({', '.join(map(repr, models))}) or None, got {gpu_conv_device!r}"
            )
    if cuda_arch is None and device != "emulate":
        cuda_arch = local_cuda_arch(device or 0)
    return CudaOptions(device, cuda_arch, gpu_conv, gpu_precision, gpu_conv_device)


def _check_options(
    target: Any, pipeline: Any, cache_dir: Any, threads: Any
) -> tuple[str, str | None, Path, int | None]:
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(map(repr, TARGETS))}, got {target!r}")
    if pipeline is not None and not isinstance(pipeline, str):
        raise TypeError(f"pipeline must be a pass pipeline string or None, got {type(pipeline).__name__}")
    # "--gpuopt-optimize" (gpuopt-opt's flag) and "gpuopt-optimize" (the
    # textual pipeline gpuopt-compile --pipeline= takes) are one pipeline.
    pipeline = pipeline.strip().removeprefix("--") if pipeline else None
    pipeline = pipeline or None
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise TypeError(f"cache_dir must be a path or None, got {type(cache_dir).__name__}")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int or None (the runtime's default), got {threads!r}")
    return target, pipeline, cache, threads


def _as_model_input(x: Any, what: str, target: str) -> torch.Tensor:
    """``x`` as the runtime takes it: a dense float32 CPU tensor, the same
    tensor (no copy) when it already is one."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what} must be a torch.Tensor, got {type(x).__name__}")
    if x.layout != torch.strided:
        raise TypeError(f"{what} is a {x.layout} tensor; gpuopt takes dense (strided) tensors")
    if x.device.type != "cpu":
        where = "copies them to the GPU itself" if target == "cuda" else "reads host memory"
        raise ValueError(
            f"{what} is on device {x.device}; a gpuopt {target} model takes CPU tensors "
            f"(its runtime {where}): pass x.cpu()"
        )
    if not x.dtype.is_floating_point:
        raise TypeError(f"{what} has dtype {x.dtype}; gpuopt models take floating-point (float32) inputs")
    x = x.detach()
    if x.dtype != torch.float32:
        x = x.to(torch.float32)
    if not x.is_contiguous():
        x = x.contiguous()
    return x.resolve_neg().resolve_conj()


def _shapes_text(shapes: Sequence[tuple[int, ...]]) -> str:
    return ", ".join("x".join(map(str, s)) if s else "scalar" for s in shapes)


# ---------------------------------------------------------------------------
# Capture helpers
# ---------------------------------------------------------------------------


class _Probe(nn.Module):
    """What the capture runs: ``fn`` on the inputs, with ``params`` and
    ``buffers`` as the tensors it names (``seg.param`` by these names). It
    remembers the structure of ``fn``'s output, to give the compiled model's
    outputs the same structure."""

    def __init__(
        self,
        fn: Callable[..., Any],
        params: list[tuple[str, torch.Tensor]],
        buffers: list[tuple[str, torch.Tensor]],
    ) -> None:
        super().__init__()
        object.__setattr__(self, "_gp_fn", fn)
        object.__setattr__(self, "_gp_params", params)
        object.__setattr__(self, "_gp_buffers", buffers)
        self.spec: pytree.TreeSpec | None = None
        self.leaves: list[Any] = []

    def forward(self, *xs: torch.Tensor) -> Any:
        out = self._gp_fn(*xs)
        self.leaves, self.spec = pytree.tree_flatten(out)
        return out

    def named_parameters(self, *args: Any, **kwargs: Any) -> Any:
        return iter(self._gp_params)

    def named_buffers(self, *args: Any, **kwargs: Any) -> Any:
        return iter(self._gp_buffers)


def _capture(probe: _Probe, inputs: Sequence[torch.Tensor], what: str) -> tuple[Captured, pytree.TreeSpec]:
    """Exports ``probe`` on ``inputs``; the graph and its output structure."""
    try:
        captured = export(probe, list(inputs))
    except CaptureError:
        raise
    except RuntimeError as e:  # PyTorch rejected the inputs (a shape the model cannot take)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(
            f"running {what} on input shape(s) {_shapes_text([tuple(x.shape) for x in inputs])} "
            f"failed: {first}"
        ) from e
    leaves = probe.leaves
    if len(leaves) != len(captured.outputs) or any(a is not b for a, b in zip(leaves, captured.outputs)):
        kinds = sorted({type(v).__name__ for v in leaves if not isinstance(v, torch.Tensor)})
        raise CaptureError(
            f"{what} returns {', '.join(kinds) or 'a structure'} beside tensors; a compiled model "
            "returns tensors (or tuples, lists and dicts of tensors)"
        )
    assert probe.spec is not None
    return captured, probe.spec


# ---------------------------------------------------------------------------
# Artifacts, weights and loaded models
# ---------------------------------------------------------------------------


@dataclass
class _Variant:
    """One compiled shape: the artifact, its loaded model, its output structure."""

    artifact: Path
    model: CompiledModel
    spec: pytree.TreeSpec
    cached: bool  # True: the artifact came from the cache
    param_names: frozenset[str]  # the seg.param names of its graph


class _Engine:
    """Compiles, caches and loads artifacts; owns the weights files."""

    def __init__(
        self,
        target: str,
        pipeline: str | None,
        cache_dir: Path,
        threads: int | None,
        cuda: CudaOptions | None = None,
    ) -> None:
        self.target = target
        self.cuda = cuda
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.threads = threads
        self.variants: dict[Any, _Variant] = {}
        self.lock = threading.RLock()
        self._tmp = tempfile.TemporaryDirectory(prefix="gpuopt-weights-")
        self._finalizer = weakref.finalize(self, self._tmp.cleanup)
        self._weights: list[tuple[list[list[Any]], Path]] = []  # (layout, file)
        self._generation = 0

    def artifact(self, mlir: str, layout: list[list[Any]]) -> tuple[Path, bool]:
        """The compiled artifact of ``mlir``: from the cache, or compiled into it.
        Returns its path and whether it was cached."""
        key, record = cache_key(mlir, layout, self.pipeline, self.target, self.cuda)
        entry = self.cache_dir / key[:2] / key
        path = entry / _ARTIFACT_NAME[self.target]
        if path.is_file():
            log.debug("gpuopt: artifact %s from the cache", path)
            return path, True
        try:
            entry.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OSError(
                e.errno, f"cannot create the gpuopt cache directory {entry}: {e.strerror}"
            ) from None
        write_text(entry / "model.mlir", mlir)
        write_text(entry / "key.json", json.dumps(record, indent=1, sort_keys=True) + "\n")
        log.info(
            "gpuopt: compiling %s for target %s (pipeline %s)",
            entry / "model.mlir",
            self.target,
            self.pipeline or "none",
        )
        with atomic_output(path) as tmp:
            compile_model(
                entry / "model.mlir",
                tmp,
                pipeline=self.pipeline,
                target=self.target,
                cuda_flags=self.cuda.compile_flags() if self.cuda is not None else (),
            )
        return path, False

    def weights_file(self, params: dict[str, torch.Tensor], fresh: bool = False) -> Path:
        """A safetensors file of ``params``: the one already written for this
        layout (the values of the first capture), or a new one."""
        layout = weights_layout(params)
        if not fresh:
            for known, path in self._weights:
                if known == layout:
                    return path
        from safetensors.torch import save_file

        self._generation += 1
        path = Path(self._tmp.name) / f"weights{self._generation}.safetensors"
        # Fresh contiguous copies: safetensors refuses tensors sharing memory.
        save_file({k: v.detach().cpu().contiguous().clone() for k, v in params.items()}, str(path))
        self._weights = [(k, p) for k, p in self._weights if k != layout] + [(layout, path)]
        return path

    def load(self, artifact: Path, weights: Path | None) -> CompiledModel:
        model = CompiledModel(artifact, weights, device=self.cuda.device if self.cuda is not None else None)
        if self.threads is not None:
            # The model's own library (a private copy per load for the CPU).
            model._lib.gpuopt_set_num_threads(self.threads)
        return model

    def add(self, key: Any, captured: Captured, spec: pytree.TreeSpec) -> _Variant:
        artifact, cached = self.artifact(captured.mlir, weights_layout(captured.params))
        weights = self.weights_file(captured.params) if captured.params else None
        # A load error names the artifact (the toolchain is in the key: a
        # cached artifact is one this gpuopt-compile would write).
        model = self.load(artifact, weights)
        variant = _Variant(artifact, model, spec, cached, frozenset(captured.params))
        self.variants[key] = variant
        return variant

    def close(self) -> None:
        with self.lock:
            for v in self.variants.values():
                v.model.close()
            self.variants.clear()
        self._finalizer()


def _run(variant: _Variant, inputs: Sequence[torch.Tensor]) -> Any:
    # .numpy() shares the tensor's memory; CompiledModel.run passes a
    # contiguous float32 array as it is, and its outputs are fresh arrays.
    outputs = variant.model.run(*[x.numpy() for x in inputs])
    return pytree.tree_unflatten([torch.from_numpy(y) for y in outputs], variant.spec)


# ---------------------------------------------------------------------------
# gpuopt.compile
# ---------------------------------------------------------------------------


class CompiledCallable:
    """A module compiled by :func:`compile`: call it like the module.

    ``artifacts`` maps each compiled input-shape tuple to its artifact;
    ``cached`` to whether that artifact came from the cache.
    """

    def __init__(
        self,
        module: nn.Module,
        example_inputs: Sequence[torch.Tensor],
        target: str,
        pipeline: str | None,
        cache_dir: Path,
        threads: int | None,
        cuda: CudaOptions | None = None,
    ) -> None:
        self.module = module
        self.target = target
        #: The target="cuda" settings (None for target="cpu").
        self.cuda = cuda
        self.pipeline = pipeline
        self.cache_dir = cache_dir
        self.example_shapes = [tuple(x.shape) for x in example_inputs]
        self._what = type(module).__name__
        self._engine = _Engine(target, pipeline, cache_dir, threads, cuda)
        self._compile(example_inputs)

    @property
    def artifacts(self) -> dict[tuple[tuple[int, ...], ...], Path]:
        return {k: v.artifact for k, v in self._engine.variants.items()}

    @property
    def cached(self) -> dict[tuple[tuple[int, ...], ...], bool]:
        return {k: v.cached for k, v in self._engine.variants.items()}

    def _compile(self, inputs: Sequence[torch.Tensor]) -> _Variant:
        key = tuple(tuple(x.shape) for x in inputs)
        with self._engine.lock:
            if key in self._engine.variants:
                return self._engine.variants[key]
            probe = _Probe(
                self.module, list(self.module.named_parameters()), list(self.module.named_buffers())
            )
            self.module.eval()
            captured, spec = _capture(probe, inputs, self._what)
            return self._engine.add(key, captured, spec)

    def __call__(self, *inputs: torch.Tensor, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(
                f"a compiled {self._what} takes its inputs by position, got keyword(s) {', '.join(kwargs)}"
            )
        if len(inputs) != len(self.example_shapes):
            raise TypeError(
                f"the compiled {self._what} takes {len(self.example_shapes)} input(s), got {len(inputs)}"
            )
        tensors = []
        for i, (x, shape) in enumerate(zip(inputs, self.example_shapes)):
            x = _as_model_input(x, f"input {i}", self.target)
            if x.dim() != len(shape):
                raise ValueError(
                    f"input {i} has shape {tuple(x.shape)} (rank {x.dim()}); the compiled {self._what} "
                    f"takes rank-{len(shape)} inputs, like its example {shape} (other sizes of that rank "
                    "compile another artifact)"
                )
            tensors.append(x)
        key = tuple(tuple(x.shape) for x in tensors)
        variant = self._engine.variants.get(key) or self._compile(tensors)
        return _run(variant, tensors)

    forward = __call__

    def close(self) -> None:
        """Frees the loaded models and the weights files."""
        self._engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        cuda = f", {self.cuda}" if self.cuda is not None else ""
        return (
            f"CompiledCallable({self._what}, target={self.target!r}, pipeline={self.pipeline!r}{cuda}, "
            f"shapes={[_shapes_text(k) for k in self._engine.variants]})"
        )


def compile(
    module: nn.Module,
    example_inputs: Sequence[torch.Tensor] | torch.Tensor,
    target: str = "cpu",
    pipeline: str | None = "gpuopt-optimize",
    cache_dir: str | os.PathLike | None = None,
    threads: int | None = None,
    *,
    device: int | str | None = None,
    cuda_arch: str | None = None,
    gpu_conv: str = "generated",
    gpu_precision: str = "fp32",
    gpu_conv_device: str | None = None,
) -> CompiledCallable:
    """Exports ``module`` on ``example_inputs``, compiles it for ``target``
    ("cpu" or "cuda") after ``pipeline`` (gpuopt-compile's ``--pipeline``;
    None: the graph as exported) and returns it, loaded, as a callable.

    For ``target="cuda"`` (see :class:`CudaOptions`): ``device`` is the GPU
    ordinal (None: 0) or ``"emulate"`` (the host emulator, no GPU needed);
    ``cuda_arch`` the kernel images (``"sm_90"``, ``"sm_86,sm_90"``; None:
    the GPU ``device``'s own architecture as its driver reports it, else
    gpuopt-compile's default); ``gpu_conv`` ``"generated"`` (gpuopt's kernels),
    ``"library"`` (cuDNN/cuBLASLt where eligible) or ``"auto"`` (cuDNN/cuBLASLt
    where eligible and the cost model predicts them faster, on the device
    model ``gpu_conv_device`` of data/devices.json, e.g. ``"rtx3080"``; None:
    gpuopt-compile's default, ``"h200"``); ``gpu_precision``
    ``"fp32"`` or ``"tf32"`` (the arithmetic of the library steps and the
    workgroup-tiled kernels). Setting them for
    target="cpu" is a ValueError.

    ``threads`` sets the kernels' thread count of this model's library
    (default: the runtime's, GPUOPT_NUM_THREADS or all cores). Raises
    gpuopt.capture.CaptureError (the module cannot be captured; the message
    names the call and its source line), gpuopt.tools.ToolError
    (gpuopt-compile failed), gpuopt.compiled.CompiledModelError (the artifact
    cannot be loaded, e.g. no NVIDIA driver for target="cuda"), TypeError or
    ValueError (bad arguments).
    """
    target, pipeline, cache, threads = _check_options(target, pipeline, cache_dir, threads)
    cuda = _check_cuda_options(target, device, cuda_arch, gpu_conv, gpu_precision, gpu_conv_device)
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)) or not example_inputs:
        raise TypeError("example_inputs must be a tensor or a non-empty tuple/list of tensors")
    examples = [_as_model_input(x, f"example input {i}", target) for i, x in enumerate(example_inputs)]
    if module.training:
        log.warning(
            "gpuopt.compile: %s was in training mode; switched to eval mode (gpuopt compiles "
            "inference graphs)",
            type(module).__name__,
        )
        module.eval()
    return CompiledCallable(module, examples, target, pipeline, cache, threads, cuda)


# ---------------------------------------------------------------------------
# torch.compile(backend="gpuopt")
# ---------------------------------------------------------------------------


class _Unsupported(Exception):
    """A Dynamo graph this backend does not compile (it runs eagerly)."""


_PARAM_PATH = re.compile(r"\._(?:modules|parameters|buffers)\['([^']*)'\]|\.([A-Za-z_]\w*)")
_ROOT = re.compile(r"^L\['[^']*'\]")


def _source_name(node: torch.fx.Node) -> str | None:
    arg = node.meta.get("grapharg")
    source = getattr(arg, "source", None)
    if source is None:
        return None
    name = getattr(source, "name", None)
    name = name() if callable(name) else name
    return name if isinstance(name, str) else None


def _weight_name(source: str | None) -> str | None:
    """The state_dict name of a module's parameter or buffer from Dynamo's
    source of it (``L['self']._modules['conv']._parameters['weight']`` is
    ``conv.weight``); None when the source is not one."""
    if source is None or not re.search(r"\._(?:parameters|buffers)\['", source):
        return None
    root = _ROOT.match(source)
    if root is None:
        return None
    rest = source[root.end() :]
    parts = []
    pos = 0
    for m in _PARAM_PATH.finditer(rest):
        if m.start() != pos:
            return None
        parts.append(m.group(1) if m.group(1) is not None else m.group(2))
        pos = m.end()
    return ".".join(parts) if pos == len(rest) and parts else None


def _stamp(t: torch.Tensor) -> tuple[int, int, int | None]:
    """What changes when a weight is replaced or written in place."""
    try:
        version: int | None = t._version
    except RuntimeError:  # an inference tensor has no version counter
        version = None
    return id(t), t.data_ptr(), version


class _DynamoGraph:
    """A Dynamo graph compiled by gpuopt: per input shapes, an artifact."""

    _count = 0

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], engine: _Engine) -> None:
        _DynamoGraph._count += 1
        self.name = f"graph {_DynamoGraph._count}"
        self.gm = gm
        self.engine = engine
        self.eager: dict[Any, str] = {}  # shapes that run eagerly -> why
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(example_inputs):
            raise _Unsupported(f"{len(placeholders)} graph inputs but {len(example_inputs)} example inputs")
        self.inputs: list[int] = []  # positions of the model's tensor inputs
        self.ints: list[int] = []  # positions of int (size) arguments
        self.weights: dict[int, str] = {}  # position -> weight name
        self.template: list[Any] = []
        used: dict[str, int] = {}
        for i, (node, ex) in enumerate(zip(placeholders, example_inputs)):
            if isinstance(ex, torch.SymInt):
                hint = getattr(ex.node, "hint", None)
                if not isinstance(hint, int):
                    raise _Unsupported(f"graph input '{node.name}' is a size without a known value")
                self.ints.append(i)
                self.template.append(hint)
            elif isinstance(ex, int) and not isinstance(ex, bool):
                self.ints.append(i)
                self.template.append(ex)
            elif isinstance(ex, torch.Tensor):
                name = _weight_name(_source_name(node))
                if name is None and isinstance(ex, nn.Parameter):
                    name = node.name
                if name is None:
                    self.inputs.append(i)
                    self.template.append(None)
                else:
                    if name in used and example_inputs[used[name]] is not ex:
                        name = f"{name}@{node.name}"
                    used[name] = i
                    self.weights[i] = name
                    self.template.append(ex)
            else:
                raise _Unsupported(
                    f"graph input '{node.name}' is a {type(ex).__name__}; gpuopt compiles graphs of tensors "
                    "and sizes"
                )
        if not self.inputs:
            raise _Unsupported("the graph has no tensor input")
        self.stamps = {i: _stamp(self.template[i]) for i in self.weights}
        self.warned_grad = False
        self.variant(list(example_inputs), initial=True)
        log.info(
            "torch.compile backend 'gpuopt': compiled %s (%d inputs, %d weights)",
            self.name,
            len(self.inputs),
            len(self.weights),
        )

    def _key(self, args: Sequence[Any]) -> Any:
        shapes = tuple(tuple(args[i].shape) for i in self.inputs)
        ints = tuple(
            int(args[i]) if not isinstance(args[i], torch.SymInt) else args[i].node.hint for i in self.ints
        )
        return shapes, ints

    def _probe(self, ints: Sequence[int]) -> _Probe:
        template = list(self.template)
        for i, v in zip(self.ints, ints):
            template[i] = v
        positions = self.inputs
        gm = self.gm

        def run_graph(*xs: torch.Tensor) -> Any:
            args = list(template)
            for i, x in zip(positions, xs):
                args[i] = x
            return gm(*args)

        params = [(name, self.template[i]) for i, name in self.weights.items()]
        params += list(gm.named_parameters())
        return _Probe(run_graph, params, list(gm.named_buffers()))

    def variant(self, args: Sequence[Any], initial: bool = False) -> _Variant | None:
        """The compiled variant for ``args``' shapes (compiled now if new), or
        None when those shapes run eagerly."""
        key = self._key(args)
        with self.engine.lock:
            if key in self.engine.variants:
                return self.engine.variants[key]
            if key in self.eager:
                return None
            inputs = []
            for n, i in enumerate(self.inputs):
                x = args[i]
                if x.device.type != "cpu" or x.dtype != torch.float32 or x.layout != torch.strided:
                    raise _Unsupported(
                        f"graph input {n} is a {x.dtype} tensor on {x.device}; gpuopt's {self.engine.target} "
                        "models take float32 CPU tensors"
                    )
                inputs.append(x.detach())
            try:
                captured, spec = _capture(self._probe(key[1]), inputs, f"Dynamo {self.name}")
                mlir = _stable_locations(captured.mlir)
                captured.mlir = mlir
                return self.engine.add(key, captured, spec)
            except (CaptureError, ToolError, ValueError, _Unsupported) as e:
                if initial:
                    raise _Unsupported(str(e)) from e
                log.warning(
                    "torch.compile backend 'gpuopt': %s runs eagerly for input shape(s) %s: %s",
                    self.name,
                    _shapes_text(key[0]),
                    e,
                )
                self.eager[key] = str(e)
                return None

    def _check_weights(self, args: Sequence[Any]) -> None:
        """Rebinds the weights when Dynamo passes other tensors or they were written."""
        changed = [i for i in self.weights if _stamp(args[i]) != self.stamps[i]]
        if not changed:
            return
        with self.engine.lock:
            for i in self.weights:
                self.template[i] = args[i]
                self.stamps[i] = _stamp(args[i])
            params = {name: self.template[i] for i, name in self.weights.items()}
            params.update(dict(self.gm.named_parameters()))
            params.update(dict(self.gm.named_buffers()))
            log.info("torch.compile backend 'gpuopt': %s: weights changed; rebinding them", self.name)
            written: set[str] = set()
            for v in self.engine.variants.values():
                used = {k: t for k, t in params.items() if k in v.param_names}
                layout = json.dumps(weights_layout(used))
                weights = self.engine.weights_file(used, fresh=layout not in written) if used else None
                written.add(layout)
                old = v.model
                v.model = self.engine.load(v.artifact, weights)
                old.close()

    def __call__(self, *args: Any) -> Any:
        if torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
            if not self.warned_grad:
                self.warned_grad = True
                log.warning(
                    "torch.compile backend 'gpuopt': %s runs eagerly: gradients are required "
                    "(call under torch.no_grad() or torch.inference_mode())",
                    self.name,
                )
            return self.gm(*args)
        self._check_weights(args)
        variant = self.variant(args)
        if variant is None:
            return self.gm(*args)
        return _run(variant, [args[i].detach().contiguous() for i in self.inputs])


_EVAL_WITH_KEY = re.compile(r'loc\("<eval_with_key>\.\d+"')


def _stable_locations(mlir: str) -> str:
    """FX names the file of a graph's code ``<eval_with_key>.N``, N counting
    the graphs of the process; without N the graph's text (and its cache
    key) is the same in every process."""
    return _EVAL_WITH_KEY.sub('loc("<torch.compile graph>"', mlir)


def dynamo_backend(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    options: dict[str, Any] | None = None,
    mode: str | None = None,
) -> Callable[..., Any]:
    """The torch.compile backend "gpuopt": ``torch.compile(m, backend="gpuopt",
    options={"target": "cpu", "pipeline": ..., "cache_dir": ..., "threads": ...})``;
    for ``"target": "cuda"`` also ``"device"``, ``"cuda_arch"``, ``"gpu_conv"``,
    ``"gpu_precision"`` and ``"gpu_conv_device"`` (as :func:`compile`).

    Returns the compiled graph, or ``gm.forward`` (eager) with the reason
    logged when gpuopt cannot capture or compile the graph.
    """
    if mode not in (None, "default"):
        raise ValueError(f"the gpuopt backend has no mode {mode!r}; pass options={{...}} instead")
    opts = dict(options or {})
    known = {
        "target",
        "pipeline",
        "cache_dir",
        "threads",
        "device",
        "cuda_arch",
        "gpu_conv",
        "gpu_precision",
        "gpu_conv_device",
    }
    if set(opts) - known:
        raise ValueError(
            f"unknown gpuopt backend option(s) {', '.join(sorted(set(opts) - known))}; "
            f"known: {', '.join(sorted(known))}"
        )
    target, pipeline, cache, threads = _check_options(
        opts.get("target", "cpu"),
        opts.get("pipeline", "gpuopt-optimize"),
        opts.get("cache_dir"),
        opts.get("threads"),
    )
    cuda = _check_cuda_options(
        target,
        opts.get("device"),
        opts.get("cuda_arch"),
        opts.get("gpu_conv", "generated"),
        opts.get("gpu_precision", "fp32"),
        opts.get("gpu_conv_device"),
    )
    if torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs
    ):
        log.warning(
            "torch.compile backend 'gpuopt': running the graph eagerly: gradients are required (grad "
            "mode is on and an input or parameter requires grad); gpuopt compiles inference graphs: "
            "call the model under torch.no_grad() or torch.inference_mode()"
        )
        return gm.forward
    try:
        return _DynamoGraph(gm, example_inputs, _Engine(target, pipeline, cache, threads, cuda))
    except _Unsupported as e:
        log.warning("torch.compile backend 'gpuopt': running the graph eagerly: %s", e)
        return gm.forward


def _register() -> None:
    """Registers "gpuopt" with Dynamo unless the installed package's
    ``torch_dynamo_backends`` entry point does: Dynamo registers an entry
    point's function itself when the name is first looked up, and refuses a
    name registered twice."""
    from importlib.metadata import entry_points

    if any(ep.name == "gpuopt" for ep in entry_points(group="torch_dynamo_backends")):
        return
    from torch._dynamo import register_backend

    with contextlib.suppress(AssertionError):  # registered by an earlier import (a reload)
        register_backend(dynamo_backend, name="gpuopt")


_register()


class _CallableModule(types.ModuleType):
    """Lets ``gpuopt.compile(...)`` call :func:`compile` while
    ``gpuopt.compile`` stays this module (``gpuopt.compile:dynamo_backend``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> CompiledCallable:
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    # A library module: `python -m gpuopt.compile` used to print nothing and
    # exit 0, as if it had compiled something.
    print(
        "python -m gpuopt.compile: error: gpuopt.compile is the Python API "
        "(gpuopt.compile(model, example_inputs, ...)); compile from the command line "
        "with build/bin/gpuopt-compile or python -m gpuopt.export then gpuopt-compile",
        file=sys.stderr,
    )
    sys.exit(2)
