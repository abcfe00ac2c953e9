"""The graph builder of the capture (gpuopt.capture): `seg` IR emission.

A :class:`GraphBuilder` maps the tensors the capture has seen to SSA values,
emits one line of `seg` IR per op with the model's source location, and tracks
which tensors a write made stale. The op handlers (capture_handlers.py) call
it; the capture mode (capture.py) drives them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch


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
