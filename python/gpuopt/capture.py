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
op whose schema marks the arguments it writes. A handled in-place op on a fresh
intermediate (``x = conv(x); x.relu_()``) is recorded as its functional form by
rebinding the tensor; every other tensor sharing the written memory (a view,
its base, a ``detach()``) becomes stale and reading it later is an error, as is
any write the capture has no functional form for and any write into an input,
a parameter or a buffer.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

_TORCH_DIR = os.path.dirname(torch.__file__)
_THIS_DIR = os.path.dirname(os.path.abspath(__file__))
_INTERNAL_FILES = {
    os.path.join(_THIS_DIR, "capture.py"),
    os.path.join(_THIS_DIR, "export.py"),
}


class CaptureError(Exception):
    """The module cannot be captured; the message names the call and source line."""


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    col: int

    def mlir(self) -> str:
        return f'loc("{_escape(self.file)}":{self.line}:{self.col})'

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Value:
    """An SSA value of the graph being built."""

    name: str
    shape: tuple[int, ...]


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def tensor_type(shape: Sequence[int]) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}f32>"


def _ints(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _pair(v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise CaptureError(f"expected one or two values for '{name}', got {v}")
    return v  # type: ignore[return-value]


def _float(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        raise CaptureError(f"non-finite constant {v} is not supported")
    text = repr(float(v))  # shortest exact form; MLIR wants a '.' in the mantissa
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _storage(t: torch.Tensor) -> int:
    """Identity of the memory ``t`` lives in (unique while the tensor is alive)."""
    return t.untyped_storage()._cdata


def _extent(t: torch.Tensor) -> tuple[int, int]:
    """Half-open element range of its storage that ``t`` can touch (strides are >= 0)."""
    lo = t.storage_offset()
    return lo, lo + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


@dataclass(frozen=True)
class Write:
    """Memory an ATen op wrote into: storage, element range and the op's name."""

    storage: int
    lo: int
    hi: int
    op: str


@dataclass
class GraphBuilder:
    """Accumulates the body of ``func.func @forward`` as seg text."""

    param_names: dict[int, str]
    values: dict[int, Value] = field(default_factory=dict)
    keep_alive: list[Any] = field(default_factory=list)
    # Bound tensors by storage, to find what an in-place write changes.
    by_storage: dict[int, dict[int, torch.Tensor]] = field(default_factory=dict)
    # Storages of inputs, parameters and buffers: no write into them is captured.
    protected: dict[int, str] = field(default_factory=dict)
    # Tensors whose memory an in-place write changed behind their SSA value.
    stale: dict[int, str] = field(default_factory=dict)
    # Tensors bound during the current torch call.
    rebound: set[int] = field(default_factory=set)
    params: dict[str, Value] = field(default_factory=dict)
    param_tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    param_lines: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    op_counts: dict[str, int] = field(default_factory=dict)
    counter: int = 0
    loc: Location | None = None

    # -- values ---------------------------------------------------------------

    def bind(self, tensor: torch.Tensor, value: Value) -> None:
        self.values[id(tensor)] = value
        self.keep_alive.append(tensor)
        self.by_storage.setdefault(_storage(tensor), {})[id(tensor)] = tensor
        self.stale.pop(id(tensor), None)
        self.rebound.add(id(tensor))

    def record_writes(self, call: str, writes: Sequence[Write], captured: bool) -> None:
        """Accounts for the in-place ``writes`` that torch call ``call`` made.

        ``captured``: a handler recorded the call, rebinding what it wrote to
        the new value; the other tensors seeing that memory go stale.
        """
        for w in writes:
            what = f"in-place write {call} ({w.op})"
            guarded = self.protected.get(w.storage)
            if guarded is not None:
                raise CaptureError(
                    f"{self.loc}: {what} into {guarded}; a gpuopt graph cannot change its inputs, "
                    "parameters or buffers: compute a new tensor instead"
                )
            if not captured:
                raise CaptureError(
                    f"{self.loc}: {what} is not captured (gpuopt would drop it); compute a new "
                    "tensor instead (e.g. torch.cat of the pieces, or the op without '_')"
                )
            for tid, t in self.by_storage.get(w.storage, {}).items():
                lo, hi = _extent(t)
                if tid not in self.rebound and lo < w.hi and w.lo < hi and t.numel():
                    self.stale[tid] = f"{self.loc}: {what}"

    def is_traced(self, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor) and (id(obj) in self.values or id(obj) in self.param_names)

    def value(self, tensor: Any, what: str) -> Value:
        """The SSA value of ``tensor``; parameters are materialized on first use."""
        if not isinstance(tensor, torch.Tensor):
            raise CaptureError(f"{self.loc}: expected a tensor for {what}, got {type(tensor).__name__}")
        write = self.stale.get(id(tensor))
        if write is not None:
            reader = f"{what} at {self.loc}" if self.loc else what
            raise CaptureError(
                f"{write} changed memory that a tensor read later shares ({reader}; a view and its "
                "base, or a detach()); gpuopt would read the old value: write the op out of place"
            )
        v = self.values.get(id(tensor))
        if v is not None:
            return v
        name = self.param_names.get(id(tensor))
        if name is None:
            raise CaptureError(
                f"{self.loc}: {what} is a tensor that is neither a model input, a parameter or "
                "buffer of the module, nor computed from them (a constant created in forward?); "
                "gpuopt cannot capture it"
            )
        self._check_dtype(tensor, f"parameter '{name}'")
        if name not in self.params:
            ssa = f"%p{len(self.params)}"
            self.params[name] = Value(ssa, tuple(tensor.shape))
            self.param_tensors[name] = tensor
            self.param_lines.append(
                f'{ssa} = seg.param "{_escape(name)}" : {tensor_type(tensor.shape)} {self.loc_text()}'
            )
        return self.params[name]

    def _check_dtype(self, tensor: torch.Tensor, what: str) -> None:
        if tensor.dtype != torch.float32:
            raise CaptureError(f"{self.loc}: {what} has dtype {tensor.dtype}; gpuopt captures float32")

    def loc_text(self) -> str:
        return self.loc.mlir() if self.loc else "loc(unknown)"

    # -- emission -------------------------------------------------------------

    def emit(
        self,
        op: str,
        operands: Sequence[Value],
        attrs: str,
        result: torch.Tensor,
        type_sig: str | None = None,
    ) -> Value:
        """Appends ``%r = seg.<op> operands attrs : types`` and binds ``result``."""
        if not isinstance(result, torch.Tensor):
            raise CaptureError(f"{self.loc}: seg.{op} expected a tensor result")
        self._check_dtype(result, f"the result of seg.{op}")
        shape = tuple(result.shape)
        ssa = f"%{self.counter}"
        self.counter += 1
        if type_sig is None:
            ins = ", ".join(tensor_type(o.shape) for o in operands)
            type_sig = f"{ins} -> {tensor_type(shape)}"
        text = f"{ssa} = seg.{op} " + ", ".join(o.name for o in operands)
        if attrs:
            text += " " + attrs
        text += f" : {type_sig} {self.loc_text()}"
        self.lines.append(text)
        self.op_counts[op] = self.op_counts.get(op, 0) + 1
        v = Value(ssa, shape)
        self.bind(result, v)
        return v

    def alias(self, result: torch.Tensor, value: Value) -> None:
        """``result`` holds the same data and shape as ``value`` (contiguous, dropout...)."""
        if tuple(result.shape) != value.shape:
            self.reshape(value, result)
        else:
            self.bind(result, value)

    def reshape(self, value: Value, result: torch.Tensor) -> Value:
        if tuple(result.shape) == value.shape:
            self.bind(result, value)
            return value
        return self.emit(
            "reshape", [value], "", result, f"{tensor_type(value.shape)} -> {tensor_type(result.shape)}"
        )

    def slice(
        self, value: Value, start: list[int], size: list[int], step: list[int], result: torch.Tensor
    ) -> Value:
        if list(size) == list(value.shape) and all(s == 0 for s in start):
            self.bind(result, value)
            return value
        attrs = f"start = {_ints(start)} size = {_ints(size)} step = {_ints(step)}"
        return self.emit(
            "slice", [value], attrs, result, f"{tensor_type(value.shape)} -> {tensor_type(size)}"
        )

    def text(self, inputs: Sequence[Value], outputs: Sequence[Value], header: str = "") -> str:
        args = ", ".join(f"{v.name}: {tensor_type(v.shape)}" for v in inputs)
        res = ", ".join(tensor_type(v.shape) for v in outputs)
        if len(outputs) != 1:
            res = f"({res})"
        body = [header] if header else []
        body.append(f"func.func @forward({args}) -> {res} {{")
        body += ["  " + line for line in self.param_lines + self.lines]
        names = ", ".join(v.name for v in outputs)
        types = ", ".join(tensor_type(v.shape) for v in outputs)
        body.append(f"  return {names} : {types} {self.loc_text()}")
        body.append("}")
        return "\n".join(body) + "\n"


# ---------------------------------------------------------------------------
# Handlers: one per family of torch calls. Each receives the builder, the real
# result of the call and the call's arguments, and records the seg op(s).
# ---------------------------------------------------------------------------

Handler = Callable[..., None]
HANDLERS: dict[Any, Handler] = {}


def _register(*funcs: Any) -> Callable[[Handler], Handler]:
    def wrap(fn: Handler) -> Handler:
        for f in funcs:
            HANDLERS[f] = fn
        return fn

    return wrap


def _arg(args: tuple, kwargs: dict, index: int, name: str, default: Any = None) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


T = torch.Tensor


@_register(torch.conv2d, F.conv2d)
def _conv2d(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x, w = _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "weight")
    bias = _arg(args, kwargs, 2, "bias")
    stride = _pair(_arg(args, kwargs, 3, "stride", 1), "stride")
    padding = _arg(args, kwargs, 4, "padding", 0)
    dilation = _pair(_arg(args, kwargs, 5, "dilation", 1), "dilation")
    groups = int(_arg(args, kwargs, 6, "groups", 1))
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        else:  # "same": symmetric only
            total = [dilation[i] * (w.shape[2 + i] - 1) for i in range(2)]
            if any(t % 2 for t in total):
                raise CaptureError(
                    f"{b.loc}: conv2d padding='same' with an even kernel pads asymmetrically; not supported"
                )
            padding = tuple(t // 2 for t in total)
    padding = _pair(padding, "padding")
    ops = [b.value(x, "conv2d input"), b.value(w, "conv2d weight")]
    if bias is not None:
        ops.append(b.value(bias, "conv2d bias"))
    attrs = (
        f"stride = {_ints(stride)} padding = {_ints(padding)} dilation = {_ints(dilation)} groups = {groups}"
    )
    b.emit("conv2d", ops, attrs, result)


@_register(torch.conv_transpose2d, F.conv_transpose2d)
def _conv_transpose2d(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x, w = _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "weight")
    bias = _arg(args, kwargs, 2, "bias")
    stride = _pair(_arg(args, kwargs, 3, "stride", 1), "stride")
    padding = _pair(_arg(args, kwargs, 4, "padding", 0), "padding")
    output_padding = _pair(_arg(args, kwargs, 5, "output_padding", 0), "output_padding")
    groups = int(_arg(args, kwargs, 6, "groups", 1))
    dilation = _pair(_arg(args, kwargs, 7, "dilation", 1), "dilation")
    ops = [b.value(x, "conv_transpose2d input"), b.value(w, "conv_transpose2d weight")]
    if bias is not None:
        ops.append(b.value(bias, "conv_transpose2d bias"))
    attrs = (
        f"stride = {_ints(stride)} padding = {_ints(padding)} "
        f"output_padding = {_ints(output_padding)} dilation = {_ints(dilation)} "
        f"groups = {groups}"
    )
    b.emit("conv_transpose2d", ops, attrs, result)


@_register(F.linear, torch._C._nn.linear)
def _linear(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x, w = _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "weight")
    bias = _arg(args, kwargs, 2, "bias")
    ops = [b.value(x, "linear input"), b.value(w, "linear weight")]
    if bias is not None:
        ops.append(b.value(bias, "linear bias"))
    b.emit("linear", ops, "", result)


@_register(F.batch_norm, torch.batch_norm)
def _batch_norm(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    mean, var = _arg(args, kwargs, 1, "running_mean"), _arg(args, kwargs, 2, "running_var")
    weight, bias = _arg(args, kwargs, 3, "weight"), _arg(args, kwargs, 4, "bias")
    training = _arg(args, kwargs, 5, "training", False)
    eps = float(_arg(args, kwargs, 7, "eps", 1e-5))
    if training:
        raise CaptureError(f"{b.loc}: batch_norm in training mode; call model.eval() before export")
    if mean is None or var is None or weight is None or bias is None:
        raise CaptureError(
            f"{b.loc}: batch_norm without running statistics or affine parameters is not supported"
        )
    ops = [
        b.value(x, "batch_norm input"),
        b.value(mean, "running_mean"),
        b.value(var, "running_var"),
        b.value(weight, "batch_norm weight"),
        b.value(bias, "batch_norm bias"),
    ]
    b.emit("batch_norm", ops, f"epsilon = {_float(eps)}", result)


@_register(F.layer_norm, torch.layer_norm)
def _layer_norm(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    weight, bias = _arg(args, kwargs, 2, "weight"), _arg(args, kwargs, 3, "bias")
    eps = float(_arg(args, kwargs, 4, "eps", 1e-5))
    if weight is None or bias is None:
        raise CaptureError(f"{b.loc}: layer_norm without elementwise affine parameters is not supported")
    ops = [
        b.value(x, "layer_norm input"),
        b.value(weight, "layer_norm weight"),
        b.value(bias, "layer_norm bias"),
    ]
    b.emit("layer_norm", ops, f"epsilon = {_float(eps)}", result)


def _unary(op: str, result: T, b: GraphBuilder, x: Any, attrs: str = "") -> None:
    # In-place variants (relu_, inplace=True) return the input object itself:
    # binding the result rebinds that object to the new value.
    v = b.value(x, f"{op} input")
    b.emit(op, [v], attrs, result, tensor_type(v.shape))


@_register(F.relu, torch.relu, torch.relu_, T.relu, T.relu_, F.relu_)
def _relu(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    _unary("relu", result, b, _arg(args, kwargs, 0, "input"))


@_register(torch.sigmoid, T.sigmoid, T.sigmoid_, F.sigmoid, torch.sigmoid_)
def _sigmoid(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    _unary("sigmoid", result, b, _arg(args, kwargs, 0, "input"))


@_register(F.gelu, torch._C._nn.gelu)
def _gelu(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    approximate = _arg(args, kwargs, 1, "approximate", "none")
    attrs = 'approximate = "tanh"' if approximate == "tanh" else ""
    _unary("gelu", result, b, _arg(args, kwargs, 0, "input"), attrs)


def _broadcast_binary(op: str, b: GraphBuilder, result: T, lhs: Any, rhs: Any, alpha: Any = 1) -> None:
    if alpha != 1:
        raise CaptureError(f"{b.loc}: {op} with alpha={alpha} is not supported")
    for side in (lhs, rhs):
        if not isinstance(side, torch.Tensor):
            raise CaptureError(
                f"{b.loc}: {op} with a Python scalar operand ({side!r}) is not "
                f"supported; seg.{op} takes two tensors"
            )
    # x += y returns x itself: binding the result rebinds x to the sum.
    b.emit(op, [b.value(lhs, f"{op} lhs"), b.value(rhs, f"{op} rhs")], "", result)


@_register(torch.add, T.add, T.__add__, T.__radd__, T.add_, T.__iadd__)
def _add(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    _broadcast_binary(
        "add",
        b,
        result,
        _arg(args, kwargs, 0, "input"),
        _arg(args, kwargs, 1, "other"),
        kwargs.get("alpha", 1),
    )


@_register(torch.mul, T.mul, T.__mul__, T.__rmul__, T.mul_, T.__imul__)
def _mul(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    _broadcast_binary("mul", b, result, _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "other"))


@_register(F.max_pool2d, torch.max_pool2d)
def _max_pool2d(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    kernel = _pair(_arg(args, kwargs, 1, "kernel_size"), "kernel_size")
    stride = _arg(args, kwargs, 2, "stride")
    stride = kernel if stride is None or stride == [] or stride == () else _pair(stride, "stride")
    padding = _pair(_arg(args, kwargs, 3, "padding", 0), "padding")
    dilation = _pair(_arg(args, kwargs, 4, "dilation", 1), "dilation")
    ceil_mode = bool(_arg(args, kwargs, 5, "ceil_mode", False))
    if _arg(args, kwargs, 6, "return_indices", False):
        raise CaptureError(f"{b.loc}: max_pool2d with return_indices=True is not supported")
    v = b.value(x, "max_pool2d input")
    attrs = (
        f"kernel = {_ints(kernel)} stride = {_ints(stride)} padding = {_ints(padding)} "
        f"dilation = {_ints(dilation)} ceil_mode = {str(ceil_mode).lower()}"
    )
    b.emit("max_pool2d", [v], attrs, result, f"{tensor_type(v.shape)} -> {tensor_type(result.shape)}")


@_register(F.interpolate, F.upsample)
def _interpolate(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    scale = _arg(args, kwargs, 2, "scale_factor")
    mode = _arg(args, kwargs, 3, "mode", "nearest")
    align = _arg(args, kwargs, 4, "align_corners")
    recompute = _arg(args, kwargs, 5, "recompute_scale_factor")
    if _arg(args, kwargs, 6, "antialias", False):
        raise CaptureError(f"{b.loc}: interpolate with antialias=True is not supported")
    if x.dim() != 4:
        raise CaptureError(f"{b.loc}: interpolate of a rank-{x.dim()} tensor; gpuopt supports 2-D (NCHW)")
    out = tuple(result.shape[2:])
    if scale is not None and not recompute:
        scales = scale if isinstance(scale, (tuple, list)) else (scale, scale)
        for i, s in enumerate(scales):
            # PyTorch maps coordinates with 1/scale here; seg uses in/out.
            if out[i] * 1.0 / x.shape[2 + i] != float(s):
                raise CaptureError(
                    f"{b.loc}: interpolate with scale_factor={s} on size {x.shape[2 + i]} gives "
                    f"{out[i]}, whose ratio is not the scale; pass size= or "
                    "recompute_scale_factor=True"
                )
    v = b.value(x, "interpolate input")
    sig = f"{tensor_type(v.shape)} -> {tensor_type(result.shape)}"
    if mode == "bilinear":
        attrs = f"size = {_ints(out)} align_corners = {str(bool(align)).lower()}"
        b.emit("upsample_bilinear", [v], attrs, result, sig)
    elif mode == "nearest":
        b.emit("upsample_nearest", [v], f"size = {_ints(out)}", result, sig)
    else:
        raise CaptureError(f"{b.loc}: interpolate mode '{mode}' is not supported (bilinear, nearest)")


@_register(torch.cat, torch.concat, torch.concatenate)
def _cat(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    tensors = list(_arg(args, kwargs, 0, "tensors"))
    dim = _dim(int(_arg(args, kwargs, 1, "dim", 0)), result.dim())
    ops = [b.value(t, f"cat operand {i}") for i, t in enumerate(tensors)]
    if len(ops) == 1:
        b.bind(result, ops[0])
        return
    b.emit("concat", ops, f"dim = {dim}", result)


def _split_results(b: GraphBuilder, x: T, parts: Sequence[T], dim: int) -> None:
    v = b.value(x, "split input")
    dim = _dim(dim, x.dim())
    offset = 0
    for part in parts:
        start = [0] * x.dim()
        start[dim] = offset
        b.slice(v, start, list(part.shape), [1] * x.dim(), part)
        offset += part.shape[dim]


@_register(torch.chunk, T.chunk)
def _chunk(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    _split_results(b, _arg(args, kwargs, 0, "input"), result, int(_arg(args, kwargs, 2, "dim", 0)))


@_register(torch.split, T.split, torch.tensor_split, T.tensor_split)
def _split(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    x = args[0] if args else kwargs.get("tensor", kwargs.get("input"))
    _split_results(b, x, result, int(_arg(args, kwargs, 2, "dim", 0)))


@_register(torch.unbind, T.unbind)
def _unbind(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    dim = _dim(int(_arg(args, kwargs, 1, "dim", 0)), x.dim())
    v = b.value(x, "unbind input")
    for i, part in enumerate(result):
        start = [0] * x.dim()
        start[dim] = i
        size = list(x.shape)
        size[dim] = 1
        sliced = torch.empty(size)
        sv = b.slice(v, start, size, [1] * x.dim(), sliced)
        b.reshape(sv, part)


@_register(torch.narrow, T.narrow)
def _narrow(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    dim = _dim(int(_arg(args, kwargs, 1, "dim")), x.dim())
    start = int(_arg(args, kwargs, 2, "start"))
    start = start + x.shape[dim] if start < 0 else start
    st = [0] * x.dim()
    st[dim] = start
    b.slice(b.value(x, "narrow input"), st, list(result.shape), [1] * x.dim(), result)


@_register(T.__getitem__)
def _getitem(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x, index = args[0], args[1]
    if not isinstance(index, tuple):
        index = (index,)
    if any(isinstance(i, (torch.Tensor, list, bool)) for i in index):
        raise CaptureError(f"{b.loc}: advanced (tensor/list/bool) indexing is not supported")
    explicit = sum(1 for i in index if i is not None and i is not Ellipsis)
    expanded: list[Any] = []
    for i in index:
        if i is Ellipsis:
            expanded += [slice(None)] * (x.dim() - explicit)
        else:
            expanded.append(i)
    start, size, step = [], [], []
    d = 0
    for i in expanded:
        if i is None:
            continue
        n = x.shape[d]
        if isinstance(i, int):
            j = i + n if i < 0 else i
            start.append(j), size.append(1), step.append(1)
        else:
            s0, s1, st = i.indices(n)
            if st < 1:
                raise CaptureError(f"{b.loc}: slicing with step {st} is not supported")
            count = max(0, (s1 - s0 + st - 1) // st)
            if count == 0:
                raise CaptureError(f"{b.loc}: empty slice is not supported")
            start.append(s0), size.append(count), step.append(st)
        d += 1
    while d < x.dim():
        start.append(0), size.append(x.shape[d]), step.append(1)
        d += 1
    v = b.value(x, "indexed tensor")
    sliced = b.slice(v, start, size, step, torch.empty(size))
    b.reshape(sliced, result)


@_register(F.pad, torch.constant_pad_nd)
def _pad(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    pad = list(_arg(args, kwargs, 1, "pad"))
    mode = _arg(args, kwargs, 2, "mode", "constant") if len(args) > 2 or "mode" in kwargs else "constant"
    value = _arg(args, kwargs, 3, "value", 0.0) if len(args) > 3 or "value" in kwargs else 0.0
    if isinstance(mode, (int, float)):  # torch.constant_pad_nd(input, pad, value)
        mode, value = "constant", mode
    if mode != "constant":
        raise CaptureError(f"{b.loc}: pad mode '{mode}' is not supported (constant only)")
    rank = x.dim()
    low, high = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):
        low[rank - 1 - k], high[rank - 1 - k] = int(pad[2 * k]), int(pad[2 * k + 1])
    v = b.value(x, "pad input")
    # Negative padding crops: a slice first, then the non-negative padding.
    if any(p < 0 for p in low + high):
        start = [max(0, -p) for p in low]
        size = [x.shape[d] - max(0, -low[d]) - max(0, -high[d]) for d in range(rank)]
        v = b.slice(v, start, size, [1] * rank, torch.empty(size))
        low, high = [max(0, p) for p in low], [max(0, p) for p in high]
    if all(p == 0 for p in low + high):
        b.bind(result, v)
        return
    attrs = f"low = {_ints(low)} high = {_ints(high)} value = {_float(value or 0.0)}"
    b.emit("pad", [v], attrs, result, f"{tensor_type(v.shape)} -> {tensor_type(result.shape)}")


@_register(torch.roll, T.roll)
def _roll(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    shifts = _arg(args, kwargs, 1, "shifts")
    dims = _arg(args, kwargs, 2, "dims")
    shifts = [int(shifts)] if isinstance(shifts, int) else [int(s) for s in shifts]
    v = b.value(x, "roll input")
    if dims is None or dims == () or dims == []:
        # torch.roll without dims rolls the flattened tensor.
        flat = b.reshape(v, torch.empty(x.numel()))
        rolled = b.emit(
            "roll",
            [flat],
            f"shifts = {_ints(shifts)} dims = [0]",
            torch.empty(x.numel()),
            tensor_type(flat.shape),
        )
        b.reshape(rolled, result)
        return
    dims = [int(dims)] if isinstance(dims, int) else [int(d) for d in dims]
    dims = [_dim(d, x.dim()) for d in dims]
    b.emit("roll", [v], f"shifts = {_ints(shifts)} dims = {_ints(dims)}", result, tensor_type(v.shape))


@_register(
    T.view,
    T.reshape,
    torch.reshape,
    T.flatten,
    torch.flatten,
    T.unflatten,
    torch.unflatten,
    T.squeeze,
    torch.squeeze,
    T.unsqueeze,
    torch.unsqueeze,
    T.view_as,
    T.reshape_as,
    T.squeeze_,
    T.unsqueeze_,
)
def _reshape(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    b.reshape(b.value(_arg(args, kwargs, 0, "input"), "reshape input"), result)


def _permute_to(b: GraphBuilder, x: T, perm: Sequence[int], result: T) -> None:
    v = b.value(x, "permute input")
    perm = [_dim(int(p), x.dim()) for p in perm]
    if perm == list(range(x.dim())):
        b.bind(result, v)
        return
    b.emit(
        "permute",
        [v],
        f"dims = {_ints(perm)}",
        result,
        f"{tensor_type(v.shape)} -> {tensor_type(result.shape)}",
    )


@_register(T.transpose, torch.transpose, T.swapaxes, torch.swapaxes, T.swapdims, torch.swapdims)
def _transpose(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    d0 = _dim(int(_arg(args, kwargs, 1, "dim0")), x.dim())
    d1 = _dim(int(_arg(args, kwargs, 2, "dim1")), x.dim())
    perm = list(range(x.dim()))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    _permute_to(b, x, perm, result)


@_register(T.permute, torch.permute)
def _permute(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = args[0]
    dims = (
        args[1:]
        if len(args) > 2 or (len(args) == 2 and isinstance(args[1], int))
        else (_arg(args, kwargs, 1, "dims"))
    )
    _permute_to(b, x, list(dims), result)


@_register(T.t, torch.t)
def _t(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = args[0]
    _permute_to(b, x, list(reversed(range(x.dim()))), result)


@_register(T.contiguous, T.clone, torch.clone, T.detach, torch.detach, T.float, T.to, T.cpu, T.requires_grad_)
def _identity(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = args[0]
    if isinstance(result, torch.Tensor) and result.dtype != x.dtype:
        raise CaptureError(f"{b.loc}: dtype conversion to {result.dtype} is not supported")
    b.alias(result, b.value(x, "input"))


@_register(F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout, torch.dropout)
def _dropout(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    p = float(_arg(args, kwargs, 1, "p", 0.5))
    training = _arg(args, kwargs, 2, "training", True)
    if training and p > 0:
        raise CaptureError(f"{b.loc}: dropout in training mode; call model.eval() before export")
    b.alias(result, b.value(_arg(args, kwargs, 0, "input"), "dropout input"))


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
        self.check_loose_writes()
        self.watcher.in_call += 1
        try:
            result = func(*args, **kwargs)
        finally:
            self.watcher.in_call -= 1
        writes = self.watcher.take()
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
        handler(self.b, result, *args, **kwargs)
        self.b.record_writes(_func_name(func), writes, captured=True)
        self.calls += 1
        if self.progress:
            self.progress(self.calls)
        return result

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


_COLUMNS: dict[tuple[Any, int], int] = {}


def _column(code: Any, lasti: int) -> int:
    """1-based column of the instruction at ``lasti`` (0 when unknown)."""
    key = (code, lasti)
    if key not in _COLUMNS:
        col = 0
        positions = getattr(code, "co_positions", None)
        if positions is not None:
            for i, pos in enumerate(positions()):
                if i == lasti // 2:
                    col = (pos[2] or 0) + 1
                    break
        _COLUMNS[key] = col
    return _COLUMNS[key]


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
