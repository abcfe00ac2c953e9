"""Run models compiled by ``gpuopt-compile`` from Python (ctypes, no MLIR).

A compiled model is a shared library implementing the C ABI of
``include/gpuopt/Runtime/ModelAbi.h``::

    from gpuopt.compiled import CompiledModel, compile_model, set_num_threads

    so = compile_model("m.mlir", "m.so", pipeline="gpuopt-optimize")
    with CompiledModel(so, "m.safetensors") as model:
        (y,) = model.run(x)            # x: float32 array of model.input_shapes[0]

Each library carries its own thread pool; :func:`set_num_threads` sets the
thread count of every library loaded in this process, now and later.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from gpuopt.tools import run_tool

if TYPE_CHECKING:
    from typing_extensions import Self

#: The version of ModelAbi.h this module speaks (GPUOPT_MODEL_ABI_VERSION).
ABI_VERSION = 1

_ERRLEN = 4096
_num_threads: int | None = None
_libraries: weakref.WeakSet[CompiledModel] = weakref.WeakSet()


class CompiledModelError(RuntimeError):
    """A compiled model could not be loaded or run; the message is the library's."""


def set_num_threads(n: int) -> None:
    """Sets the kernels' thread count in every loaded compiled library and in
    those loaded later (values < 1: all cores)."""
    global _num_threads
    _num_threads = int(n)
    for model in list(_libraries):
        model._lib.gpuopt_set_num_threads(_num_threads)


def compile_model(
    mlir_path: str | Path,
    out_so: str | Path,
    pipeline: str | None = None,
    target: str = "cpu",
) -> Path:
    """Runs ``gpuopt-compile`` (from the build directory, see gpuopt.tools) and
    returns the library's path; raises gpuopt.tools.ToolError on failure."""
    args: list[str | Path] = ["gpuopt-compile", mlir_path, f"--target={target}", "-o", out_so]
    if pipeline:
        args.append(f"--pipeline={pipeline}")
    run_tool([str(a) for a in args])
    return Path(out_so)


def _declare(lib: ctypes.CDLL) -> None:
    """Declares the C signatures of ModelAbi.h on ``lib``."""
    p, i64p, cp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p
    signatures: dict[str, tuple[object, list[object]]] = {
        "gpuopt_model_abi_version": (ctypes.c_int, []),
        "gpuopt_model_create": (p, [cp, ctypes.c_int, cp, ctypes.c_size_t]),
        "gpuopt_model_destroy": (None, [p]),
        "gpuopt_model_num_inputs": (ctypes.c_int, [p]),
        "gpuopt_model_num_outputs": (ctypes.c_int, [p]),
        "gpuopt_model_input_shape": (ctypes.c_int, [p, ctypes.c_int, i64p]),
        "gpuopt_model_output_shape": (ctypes.c_int, [p, ctypes.c_int, i64p]),
        "gpuopt_model_run": (ctypes.c_int, [p, p, p, cp, ctypes.c_size_t]),
        "gpuopt_set_num_threads": (None, [ctypes.c_int]),
        "gpuopt_get_num_threads": (ctypes.c_int, []),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


class CompiledModel:
    """A model library from ``gpuopt-compile`` with its weights loaded.

    ``strict`` rejects weights files holding tensors the model does not use;
    ``weights_path`` may be None for a model without parameters.
    Loading runs the model's load-time initializer once (e.g. BatchNorm
    folding); :meth:`run` is one inference. Calls from several threads are
    serialised (ctypes releases the GIL; the C side also locks).
    """

    def __init__(self, so_path: str | Path, weights_path: str | Path | None, strict: bool = False) -> None:
        self._model: int | None = None
        self._lock = threading.Lock()
        path = Path(so_path).resolve()
        try:
            self._lib = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise CompiledModelError(f"cannot load {so_path}: {e}") from None
        try:
            abi_version = self._lib.gpuopt_model_abi_version
        except AttributeError:
            raise CompiledModelError(
                f"{so_path} is not a gpuopt model library (it does not define gpuopt_model_abi_version)"
            ) from None
        abi_version.restype = ctypes.c_int
        version = abi_version()
        if version != ABI_VERSION:
            raise CompiledModelError(
                f"{so_path} has model ABI version {version}, gpuopt.compiled supports "
                f"{ABI_VERSION}; recompile it"
            )
        try:
            _declare(self._lib)
        except AttributeError as e:
            raise CompiledModelError(f"{so_path} is not a complete gpuopt model library ({e})") from None
        err = ctypes.create_string_buffer(_ERRLEN)
        weights = None if weights_path is None else str(weights_path).encode()
        model = self._lib.gpuopt_model_create(weights, int(strict), err, _ERRLEN)
        if not model:
            raise CompiledModelError(err.value.decode(errors="replace"))
        self._model = model
        query = self._lib.gpuopt_model_input_shape
        self.input_shapes = [self._shape(query, i) for i in range(self._lib.gpuopt_model_num_inputs(model))]
        query = self._lib.gpuopt_model_output_shape
        self.output_shapes = [self._shape(query, i) for i in range(self._lib.gpuopt_model_num_outputs(model))]
        _libraries.add(self)
        if _num_threads is not None:
            self._lib.gpuopt_set_num_threads(_num_threads)

    def _shape(self, query: ctypes._CFuncPtr, index: int) -> tuple[int, ...]:
        rank = query(self._model, index, None)
        dims = (ctypes.c_int64 * max(rank, 1))()
        query(self._model, index, dims)
        return tuple(dims[:rank])

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        """One inference: float32 inputs of ``input_shapes``, outputs of ``output_shapes``."""
        if self._model is None:
            raise CompiledModelError("the model is closed")
        if len(inputs) != len(self.input_shapes):
            raise ValueError(f"the model takes {len(self.input_shapes)} input(s), got {len(inputs)}")
        arrays = []
        for i, (x, shape) in enumerate(zip(inputs, self.input_shapes, strict=True)):
            a = np.ascontiguousarray(x, dtype=np.float32)
            if a.shape != shape:
                raise ValueError(f"input {i} has shape {a.shape}, the model expects {shape}")
            arrays.append(a)
        outputs = [np.empty(shape, dtype=np.float32) for shape in self.output_shapes]
        in_ptrs = (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data for a in arrays])
        out_ptrs = (ctypes.c_void_p * max(len(outputs), 1))(*[o.ctypes.data for o in outputs])
        err = ctypes.create_string_buffer(_ERRLEN)
        with self._lock:
            if self._model is None:
                raise CompiledModelError("the model is closed")
            status = self._lib.gpuopt_model_run(self._model, in_ptrs, out_ptrs, err, _ERRLEN)
        if status:
            raise CompiledModelError(err.value.decode(errors="replace"))
        return outputs

    def close(self) -> None:
        """Frees the weights and load-time results (the library stays loaded;
        intermediate buffers stay in its per-process cache for reuse)."""
        with self._lock:
            if self._model is not None:
                self._lib.gpuopt_model_destroy(self._model)
                self._model = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_model", None) is not None:
            self.close()
