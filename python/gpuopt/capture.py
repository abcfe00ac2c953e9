"""Capture a PyTorch module as a `seg` graph.

The capture runs the module once, eagerly, on example inputs, under a
``torch.overrides.TorchFunctionMode``. Every call of a torch function or tensor
method made by the model's own code is seen *before* PyTorch decomposes it —
``torch.roll``, ``F.conv2d``, ``F.linear``, ``Tensor.transpose``,
``torch.chunk``, ``x[:, :, 2:10]`` — and is recorded as the `seg` op with the
same semantics, using the real result's shape. This keeps the graph faithful
(every ``torch.roll`` becomes one ``seg.roll``) and makes the capture work on
model code written in any Python style (list comprehensions over chunks,
shapes read from ``x.shape``), at the speed of one eager forward pass.

Tensors are identified by object identity: example inputs become function
arguments, parameters and buffers become ``seg.param`` ops named by their
``state_dict`` key, and every other tensor must be computed from those. A call
the capture does not know, applied to such tensors, is an error naming the
torch function, the ATen ops it runs, and the model's source line.

In-place writes are watched one layer down, at the ATen dispatcher, where every
spelling (``x[i] = y``, ``+=``, ``relu_``, ``copy_``, ``out=``) arrives as an
op whose schema marks the arguments it writes. A handled write (slice
assignment, ``copy_``, ``fill_``, ``zero_``, or an in-place op such as
``relu_`` or ``+=``, recorded as its functional form and rebinding the tensor
it wrote) becomes a write of a box of that memory (capture_builder.Buffer):
fresh memory from ``torch.zeros_like``, ``empty``, ``full``... (the creators,
captured without a traced argument) or a computed intermediate. Views of such
memory are tracked without a value and read, like the memory itself, from its
functional value, materialized at the first read as pad/slice/concat. A write
the capture has no functional form for, a write into an input, a parameter or
a buffer, and the read of a view that is no box of written memory are errors.

The graph builder is in capture_builder.py, the op handlers in
capture_handlers.py; this module is the capture mode and its entry point,
and re-exports the names of both.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from gpuopt.capture_builder import (
    CaptureError,
    GraphBuilder,
    Location,
    Value,
    Write,
    _extent,
    _storage,
    tensor_type,
)
from gpuopt.capture_handlers import CREATORS, HANDLERS, Handler

__all__ = [
    "HANDLERS",
    "CaptureError",
    "Captured",
    "GraphBuilder",
    "Handler",
    "Location",
    "Value",
    "Write",
    "capture",
    "tensor_type",
]

_TORCH_DIR = os.path.dirname(torch.__file__)
_THIS_DIR = os.path.dirname(os.path.abspath(__file__))
_INTERNAL_FILES = {
    os.path.join(_THIS_DIR, "capture.py"),
    os.path.join(_THIS_DIR, "export.py"),
    os.path.join(_THIS_DIR, "capture_builder.py"),
    os.path.join(_THIS_DIR, "capture_handlers.py"),
}


def _tensors_in(obj: Any) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_in(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors_in(o)]
    return []


def _func_name(func: Any) -> str:
    qual = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)
    if qual.startswith(("TensorBase.", "_TensorBase.")):
        return "torch.Tensor." + qual.split(".", 1)[1]
    if qual.startswith("_VariableFunctionsClass."):
        return "torch." + qual.split(".", 1)[1]
    module = getattr(func, "__module__", None) or "torch"
    return f"{module}.{qual}"


class _AtenRecorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


_WRITTEN_ARGS: dict[Any, list[tuple[int, str]]] = {}


def _written_args(func: Any) -> list[tuple[int, str]]:
    """(position, name) of the arguments ``func``'s schema marks as written (``Tensor(a!)``).

    View ops that only restride their input in place (``squeeze_``,
    ``transpose_``) write no data and are left out.
    """
    written = _WRITTEN_ARGS.get(func)
    if written is None:
        written = []
        if torch.Tag.inplace_view not in func.tags:
            for i, a in enumerate(func._schema.arguments):
                if a.alias_info is not None and a.alias_info.is_write:
                    written.append((i, a.name))
        _WRITTEN_ARGS[func] = written
    return written


class _WriteWatcher(TorchDispatchMode):
    """Collects the memory every ATen op writes into, from the op's schema."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[Write] = []
        # Writes made outside any torch call the capture mode sees (under
        # torch._C.DisableTorchFunction(), from a C++ extension), each with
        # the model's line that made it: no later call can name that line.
        self.loose: list[tuple[Location, Write]] = []
        self.in_call = 0  # > 0 while the capture mode runs a torch call

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        for i, name in _written_args(func):
            arg = args[i] if i < len(args) else kwargs.get(name)
            for t in _tensors_in(arg):
                if t.numel():
                    write = Write(_storage(t), *_extent(t), str(func))
                    if self.in_call:
                        self.writes.append(write)
                    else:
                        self.loose.append((_user_location(), write))
        return out

    def take(self) -> list[Write]:
        writes, self.writes = self.writes, []
        return writes


# Calls on a traced tensor that return only metadata: no memory, no values.
_METADATA_METHODS = {
    "dim",
    "ndimension",
    "size",
    "stride",
    "numel",
    "nelement",
    "element_size",
    "storage_offset",
    "is_contiguous",
    "is_floating_point",
    "is_complex",
    "get_device",
    "__len__",
}
_METADATA_PROPERTIES = {
    "shape",
    "ndim",
    "dtype",
    "device",
    "layout",
    "requires_grad",
    "is_leaf",
    "is_cuda",
    "is_cpu",
    "is_meta",
    "is_sparse",
    "is_quantized",
    "itemsize",
    "nbytes",
    "names",
    "grad_fn",
}


def _is_metadata_query(func: Any) -> bool:
    name = getattr(func, "__name__", None)
    if name == "__get__":  # a property read: x.shape, x.dtype ...
        return getattr(func.__self__, "__name__", None) in _METADATA_PROPERTIES
    return name in _METADATA_METHODS and getattr(torch.Tensor, name, None) is func


def _assigns_data(func: Any) -> bool:
    """``x.data = y``: swaps the tensor's memory and runs no ATen op to watch."""
    return getattr(func, "__name__", None) == "__set__" and getattr(func.__self__, "__name__", None) == "data"


class _CaptureMode(TorchFunctionMode):
    def __init__(
        self, builder: GraphBuilder, watcher: _WriteWatcher, progress: Callable[[int], None] | None
    ) -> None:
        super().__init__()
        self.b = builder
        self.watcher = watcher
        self.progress = progress
        self.calls = 0

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        handler = HANDLERS.get(func)
        traced = any(self.b.is_traced(t) for t in _tensors_in(args) + _tensors_in(kwargs))
        creator = CREATORS.get(func)
        self.check_loose_writes()
        self.watcher.in_call += 1
        try:
            result = func(*args, **kwargs)
        finally:
            self.watcher.in_call -= 1
        writes = self.watcher.take()
        if creator is not None:
            # torch.zeros(shape) has no traced argument and is captured all the same.
            self.b.loc = _user_location()
            self.b.rebound.clear()
            self.b.written.clear()
            creator(self.b, result, *args, **kwargs)
            self.b.record_writes(_func_name(func), writes, captured=True)
            return result
        if not traced:
            tracked = self._tracked(writes)
            if tracked:
                self.b.loc = _user_location()
                self.b.record_writes(_func_name(func), tracked, captured=False)
            return result
        self.b.loc = _user_location()
        if handler is None:
            if _assigns_data(func):
                raise CaptureError(
                    f"{self.b.loc}: assigning a tensor's .data replaces its contents without an op "
                    "gpuopt can capture; compute a new tensor instead"
                )
            self.b.record_writes(_func_name(func), writes, captured=False)
            if _is_metadata_query(func):
                return result
            if not _tensors_in(result):
                # x.numpy(), np.from_dlpack(x), x.untyped_storage(), x.item() ...: the
                # result shares or reads the tensor's memory behind the graph's back.
                raise CaptureError(
                    f"{self.b.loc}: {_func_name(func)} on a traced tensor hands its memory or "
                    "values to code gpuopt cannot capture; only tensor ops and metadata "
                    "queries (shape, size, dim, dtype, ...) are supported"
                )
            raise self._unsupported(func, args, kwargs)
        self.b.rebound.clear()
        self.b.written.clear()
        if not self._lazy_view(result, writes):
            handler(self.b, result, *args, **kwargs)
        self.b.record_writes(_func_name(func), writes, captured=True)
        self.calls += 1
        if self.progress:
            self.progress(self.calls)
        return result

    def _lazy_view(self, result: Any, writes: list[Write]) -> bool:
        """A view of memory written in place (``out[:, :2]``, ``out.narrow(...)``)
        is tracked without a value: it is read, or written through, later."""
        tensors = _tensors_in(result)
        written = {w.storage for w in writes}
        if not tensors or any(
            _storage(t) not in self.b.buffers or _storage(t) in written or not self.b.derivable(t)
            for t in tensors
        ):
            return False
        for t in tensors:
            value = self.b.values.get(id(t))
            # squeeze_/unsqueeze_ restride the tensor itself: its value is re-derived.
            if not self.b.is_traced(t) or (value is not None and value.shape != tuple(t.shape)):
                self.b.track(t)
        return True

    def _tracked(self, writes: list[Write]) -> list[Write]:
        """Only a write into memory the graph tracks matters."""
        return [w for w in writes if w.storage in self.b.by_storage or w.storage in self.b.protected]

    def check_loose_writes(self) -> None:
        """Refuses a write into tracked memory that no captured torch call made."""
        loose, self.watcher.loose = self.watcher.loose, []
        for loc, w in loose:
            if self._tracked([w]):
                self.b.loc = loc
                self.b.record_writes("outside any torch call gpuopt sees", [w], captured=False)

    def _unsupported(self, func: Any, args: tuple, kwargs: dict) -> CaptureError:
        recorder = _AtenRecorder()
        # Only to name the ATen ops in the message: a failure just names fewer.
        with contextlib.suppress(Exception), recorder:
            func(*args, **kwargs)
        aten = ", ".join(dict.fromkeys(recorder.ops)) or "no ATen op"
        return CaptureError(
            f"{self.b.loc}: unsupported operator {_func_name(func)} ({aten}); gpuopt's seg dialect "
            "has no equivalent (see docs/Export.md for the supported operators)"
        )


# One table of columns per code object: a scan of co_positions per call would be
# linear in the function's length, quadratic over a Dynamo graph's generated
# forward (one function of thousands of lines; Rolling-UNet-S: 64 s of 70).
_COLUMNS: dict[Any, list[int]] = {}


def _column(code: Any, lasti: int) -> int:
    """1-based column of the instruction at ``lasti`` (0 when unknown)."""
    table = _COLUMNS.get(code)
    if table is None:
        positions = getattr(code, "co_positions", None)
        table = [(pos[2] or 0) + 1 for pos in positions()] if positions is not None else []
        _COLUMNS[code] = table
    i = lasti // 2
    return table[i] if i < len(table) else 0


def _user_location() -> Location:
    """The innermost frame of the model's own code (not torch, not gpuopt's capture)."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_TORCH_DIR) and filename not in _INTERNAL_FILES:
            return Location(filename, frame.f_lineno, _column(frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return Location("<unknown>", 0, 0)


@dataclass
class Captured:
    """A captured graph: seg text, the parameters it uses, and what it saw."""

    mlir: str
    params: dict[str, torch.Tensor]
    outputs: list[torch.Tensor]
    op_counts: dict[str, int]
    seconds: float


def capture(
    module: nn.Module, example_inputs: Sequence[torch.Tensor], header: str = "", progress: bool = False
) -> Captured:
    """Runs ``module`` on ``example_inputs`` and returns its `seg` graph.

    The module should be in eval mode. Inputs must be float32 tensors; their
    shapes become the static shapes of ``@forward``.
    """
    names: dict[int, str] = {}
    protected: dict[int, str] = {}
    for kind, named in (("parameter", module.named_parameters()), ("buffer", module.named_buffers())):
        for name, t in named:
            names.setdefault(id(t), name)
            protected.setdefault(_storage(t), f"{kind} '{name}'")
    builder = GraphBuilder(names, protected=protected)
    inputs = []
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor) or x.dtype != torch.float32:
            raise CaptureError(f"example input {i} must be a float32 tensor")
        x = x.detach().clone()
        v = Value(f"%arg{i}", tuple(x.shape))
        builder.bind(x, v)
        builder.protected[_storage(x)] = f"input {i}"
        inputs.append((x, v))

    start = time.perf_counter()
    last = [start]

    def report(calls: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 1.0:
            last[0] = now
            print(f"export: {calls} torch calls captured ({now - start:.0f} s)", file=sys.stderr)

    watcher = _WriteWatcher()
    mode = _CaptureMode(builder, watcher, report if progress else None)
    with torch.no_grad(), watcher, mode:
        out = module(*[x for x, _ in inputs])
    mode.check_loose_writes()  # those made after the module's last torch call
    outputs = _tensors_in(out)
    if not outputs:
        raise CaptureError("the module returned no tensor")
    builder.loc = None
    out_values = [builder.value(t, f"output {i}") for i, t in enumerate(outputs)]
    text = builder.text([v for _, v in inputs], out_values, header)
    return Captured(text, builder.param_tensors, outputs, builder.op_counts, time.perf_counter() - start)
