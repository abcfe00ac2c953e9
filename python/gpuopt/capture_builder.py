"""The graph builder of the capture (gpuopt.capture): `seg` IR emission.

A :class:`GraphBuilder` maps the tensors the capture has seen to SSA values,
emits one line of `seg` IR per op with the model's source location, and keeps
the functional value of memory written in place (:class:`Buffer`). The op
handlers (capture_handlers.py) call it; the capture mode (capture.py) drives
them.

In-place writes. Every storage written in place (a fresh ``torch.zeros_like``
/ ``empty`` / ``full`` tensor, or a computed intermediate) gets a
:class:`Buffer`: its *frame* (the shape of a tensor covering the whole storage
contiguously), its content before the writes (a fill value, or a value of the
graph) and the ordered list of writes not yet materialized, each a box of the
frame (step-1 slices) and a source (a value of the box's shape, or a
constant). A tensor on that storage is read by mapping its
offset and strides back to a box of the frame; the writes are materialized
as exact functional `seg` ops at the first read (docs/Export.md, "In-place
writes", gives the canonical form: one ``seg.concat`` of ``seg.pad`` /
``seg.slice`` pieces when the writes are disjoint along one dim).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
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


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def box_in_frame(
    t: torch.Tensor, frame: Sequence[int]
) -> tuple[list[int], list[int], list[int], list[int]] | None:
    """(start, size, step, dims) of the box of a contiguous ``frame`` that tensor ``t`` views.

    ``t`` lives in the storage the frame covers from offset 0; ``dims`` are
    the frame dims of ``t``'s dims of size > 1, in ``t``'s order (not
    increasing: ``t`` is a permuted view of the box). None when ``t`` is no
    box of it (an expanded or reshaped view). Dims of ``t`` of size 1 and the
    frame's dims ``t`` drops (an integer index) do not matter.
    """
    total = math.prod(frame)
    offset = t.storage_offset()
    if t.numel() == 0 or offset >= total:
        return None
    strides = _contiguous_strides(frame)
    start = [(offset // strides[k]) % frame[k] for k in range(len(frame))]
    size, step = [1] * len(frame), [1] * len(frame)
    dims: list[int] = []
    for n, s in zip(t.shape, t.stride()):
        if n == 1:
            continue
        # At most one frame dim of size > 1 can hold n > 1 elements of stride s.
        k = next(
            (
                k
                for k in range(len(frame))
                if k not in dims
                and frame[k] > 1
                and s > 0
                and s % strides[k] == 0
                and start[k] + (n - 1) * (s // strides[k]) < frame[k]
            ),
            None,
        )
        if k is None:
            return None
        size[k], step[k] = n, s // strides[k]
        dims.append(k)
    return start, size, step, dims


def _is_frame(t: torch.Tensor, storage_numel: int) -> bool:
    """``t`` covers its whole storage, contiguously from offset 0."""
    return t.storage_offset() == 0 and t.numel() == storage_numel and t.is_contiguous()


def _dense_frame(t: torch.Tensor, storage_numel: int) -> tuple[int, ...] | None:
    """The contiguous shape of the memory of ``t`` when ``t`` covers all of it
    as a permuted contiguous tensor (the sum of a transposed view)."""
    if t.storage_offset() != 0 or t.numel() != storage_numel:
        return None
    order = sorted(range(t.dim()), key=lambda i: -t.stride(i))
    shape = tuple(t.shape[i] for i in order)
    strides = _contiguous_strides(shape)
    if any(t.shape[i] != 1 and t.stride(i) != strides[j] for j, i in enumerate(order)):
        return None
    return shape


def _storage_numel(t: torch.Tensor) -> int:
    return t.untyped_storage().nbytes() // t.element_size()


@dataclass
class PendingWrite:
    """A write not materialized yet: a box of its buffer's frame and its source."""

    start: tuple[int, ...]
    size: tuple[int, ...]
    src: Value | float  # a value of shape ``size``, or a constant
    loc: Location | None
    step: tuple[int, ...] = ()  # () or all 1: a box of step 1

    def strided(self) -> bool:
        return any(s != 1 for s in self.step)

    def end(self) -> list[int]:
        """The exclusive end of the write's bounding box."""
        step = self.step or (1,) * len(self.start)
        return [a + (n - 1) * s + 1 for a, n, s in zip(self.start, self.size, step)]


@dataclass(frozen=True)
class _Const:
    """A block holding one constant (a fill value, or a scalar written into it)."""

    value: float | None  # None: uninitialized memory (covered by later writes)


@dataclass
class Buffer:
    """The functional value of one storage written in place."""

    frame: tuple[int, ...]
    base: Value | None  # the content before ``writes``; None: all ``fill``
    fill: float | None  # None: uninitialized (torch.empty)
    origin: str  # what made the memory: "torch.zeros_like at model.py:12"
    origin_loc: Location | None = None
    writes: list[PendingWrite] = field(default_factory=list)
    version: int = 0
    # (version, lo, hi, what) of every write: what a tensor cached before may miss.
    log: list[tuple[int, int, int, str]] = field(default_factory=list)
    # A write through a view that is no box of the frame: the tensor written
    # holds the new value, every other one is unknown ("file:line: what").
    broken: str | None = None
    # The materialized value reshaped to another frame, by frame: (version, value).
    reframed: dict[tuple[int, ...], tuple[int, Value]] = field(default_factory=dict)


def _subtract_box(
    start: Sequence[int], size: Sequence[int], bstart: Sequence[int], bsize: Sequence[int]
) -> list[tuple[list[int], list[int]]]:
    """The box (start, size) less the box (bstart, bsize), as disjoint boxes."""
    lo = [max(a, b) for a, b in zip(start, bstart)]
    hi = [min(a + n, b + m) for a, n, b, m in zip(start, size, bstart, bsize)]
    if any(low >= high for low, high in zip(lo, hi)):
        return [(list(start), list(size))]
    pieces = []
    cur_start, cur_size = list(start), list(size)
    for d in range(len(start)):
        if lo[d] > cur_start[d]:
            s, n = list(cur_start), list(cur_size)
            n[d] = lo[d] - cur_start[d]
            pieces.append((s, n))
        if hi[d] < cur_start[d] + cur_size[d]:
            s, n = list(cur_start), list(cur_size)
            s[d], n[d] = hi[d], cur_start[d] + cur_size[d] - hi[d]
            pieces.append((s, n))
        cur_start[d], cur_size[d] = lo[d], hi[d] - lo[d]
    return pieces


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
    # Storages written in place, and tensors on them the capture tracks
    # without a value yet (views of a buffer, read when needed).
    buffers: dict[int, Buffer] = field(default_factory=dict)
    lazy: set[int] = field(default_factory=set)
    # The buffer version each bound tensor on a written storage was bound at.
    bound_at: dict[int, int] = field(default_factory=dict)
    # Tensors bound during the current torch call, storages its handler wrote.
    rebound: set[int] = field(default_factory=set)
    written: set[int] = field(default_factory=set)
    params: dict[str, Value] = field(default_factory=dict)
    param_tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    param_lines: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    op_counts: dict[str, int] = field(default_factory=dict)
    # Each seg.slice result's (start, size) in its operand: which write into a
    # fill is unshifted along which dim (_canonical's choice of concat dim).
    slice_boxes: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    counter: int = 0
    loc: Location | None = None

    # -- values ---------------------------------------------------------------

    def bind(self, tensor: torch.Tensor, value: Value) -> None:
        self.values[id(tensor)] = value
        self.keep_alive.append(tensor)
        st = _storage(tensor)
        self.by_storage.setdefault(st, {})[id(tensor)] = tensor
        self.lazy.discard(id(tensor))
        buf = self.buffers.get(st)
        if buf is not None:
            self.bound_at[id(tensor)] = buf.version
        self.rebound.add(id(tensor))

    def track(self, tensor: torch.Tensor) -> None:
        """``tensor`` views a buffer; its value is derived when it is read."""
        self.values.pop(id(tensor), None)
        self.keep_alive.append(tensor)
        self.by_storage.setdefault(_storage(tensor), {})[id(tensor)] = tensor
        self.lazy.add(id(tensor))

    def new_buffer(self, tensor: torch.Tensor, fill: float | None, origin: str) -> None:
        """``tensor`` is fresh memory holding ``fill`` (None: uninitialized)."""
        st = _storage(tensor)
        self.buffers[st] = Buffer(tuple(tensor.shape), None, fill, origin, self.loc)
        self.track(tensor)
        self.written.add(st)

    def derivable(self, tensor: torch.Tensor) -> bool:
        """``tensor`` is a box of a frame of its storage's buffer."""
        buf = self.buffers.get(_storage(tensor))
        return buf is not None and self._box(buf, tensor) is not None

    def record_writes(self, call: str, writes: Sequence[Write], captured: bool) -> None:
        """Accounts for the in-place ``writes`` that torch call ``call`` made.

        ``captured``: a handler recorded the call, either declaring its writes
        (``write``) or rebinding the tensor it wrote to the new value, which
        is then written into that tensor's box of its storage.
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
        done = set(self.written)
        for w in writes:
            if w.storage in done or w.storage not in self.by_storage:
                continue
            done.add(w.storage)
            what = f"in-place write {call} ({w.op})"
            targets = [t for tid, t in self.by_storage[w.storage].items() if tid in self.rebound]
            if not targets:
                raise CaptureError(
                    f"{self.loc}: {what} is not captured (gpuopt would drop it); compute a new "
                    "tensor instead (e.g. torch.cat of the pieces, or the op without '_')"
                )
            for t in targets:
                self.write(t, self.values[id(t)], what)

    def is_traced(self, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor) and (
            id(obj) in self.values or id(obj) in self.param_names or id(obj) in self.lazy
        )

    def value(self, tensor: Any, what: str) -> Value:
        """The SSA value of ``tensor``; parameters are materialized on first use."""
        if not isinstance(tensor, torch.Tensor):
            raise CaptureError(f"{self.loc}: expected a tensor for {what}, got {type(tensor).__name__}")
        if id(tensor) in self.values or id(tensor) in self.lazy:
            buf = self.buffers.get(_storage(tensor))
            if buf is not None:
                return self._read(buf, tensor, what)
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

    # -- in-place writes ------------------------------------------------------

    def _frames(self, buf: Buffer, tensor: torch.Tensor) -> list[tuple[int, ...]]:
        """The buffer's frame first, then the other shapes covering its storage."""
        frames = [buf.frame]
        numel = math.prod(buf.frame)
        for t in [tensor, *self.by_storage.get(_storage(tensor), {}).values()]:
            shape = tuple(t.shape)
            if shape not in frames and _is_frame(t, numel):
                frames.append(shape)
        return frames

    def _box(
        self, buf: Buffer, tensor: torch.Tensor
    ) -> tuple[tuple[int, ...], list[int], list[int], list[int], list[int]] | None:
        for frame in self._frames(buf, tensor):
            box = box_in_frame(tensor, frame)
            if box is not None:
                return (frame, *box)
        return None

    def _fresh(self, buf: Buffer, tensor: torch.Tensor) -> bool:
        """No write since ``tensor`` was bound touched its memory."""
        since = self.bound_at.get(id(tensor), 0)
        lo, hi = _extent(tensor)
        return not any(v > since and a < hi and lo < b for v, a, b, _ in buf.log)

    def _read(self, buf: Buffer, tensor: torch.Tensor, what: str) -> Value:
        v = self.values.get(id(tensor))
        if v is not None and self._fresh(buf, tensor):
            return v
        reader = f"{what} at {self.loc}" if self.loc else what
        if buf.broken is not None:
            raise CaptureError(
                f"{buf.broken} changed memory that a tensor read later shares ({reader}) through a "
                "view gpuopt cannot express as a box of it (a reshape of part of it); gpuopt "
                "would read the old value: write the op out of place"
            )
        box = self._box(buf, tensor)
        if box is None:
            lo, hi = _extent(tensor)
            since = self.bound_at.get(id(tensor), 0)
            write = next(
                (w for v, a, b, w in reversed(buf.log) if v > since and a < hi and lo < b),
                f"{self.loc}: an in-place write",
            )
            raise CaptureError(
                f"{write} changed memory that a tensor read later shares ({reader}), and that tensor "
                "is not a box of the written one (a reshape of part of it); gpuopt would "
                "read the old value: write the op out of place"
            )
        frame, start, size, step, dims = box
        value = self._read_box(buf, frame, start, size, step, what)
        value = self._from_box(value, size, dims, tuple(tensor.shape))
        self.values[id(tensor)] = value
        self.bound_at[id(tensor)] = buf.version
        self.lazy.discard(id(tensor))
        return value

    def _read_box(
        self,
        buf: Buffer,
        frame: tuple[int, ...],
        start: list[int],
        size: list[int],
        step: list[int],
        what: str,
    ) -> Value:
        """The value of a box of ``frame`` of the buffer, materializing its writes if needed."""
        if frame == buf.frame and all(s == 1 for s in step):
            # Read from the one write (or the base) that holds the whole box.
            end = [s + n for s, n in zip(start, size)]
            for w in reversed(buf.writes):
                w_end = w.end()
                if all(a < e and b < we for a, e, b, we in zip(start, w_end, w.start, end)):
                    if (
                        isinstance(w.src, Value)
                        and not w.strided()
                        and all(ws <= s and e <= we for ws, s, e, we in zip(w.start, start, end, w_end))
                    ):
                        rel = [s - ws for s, ws in zip(start, w.start)]
                        return self._slice_v(w.src, rel, size, step)
                    break
            else:
                if buf.base is not None:
                    return self._slice_v(buf.base, start, size, step)
        value = self.materialize(buf, what)
        if frame != buf.frame:
            cached = buf.reframed.get(frame)
            if cached is None or cached[0] != buf.version:
                cached = (buf.version, self._reshape_v(value, frame))
                buf.reframed[frame] = cached
            value = cached[1]
        return self._slice_v(value, start, size, step)

    def write(self, tensor: torch.Tensor, src: Value | float, what: str) -> None:
        """``tensor`` (a view of memory the graph tracks) now holds ``src``:
        a value of ``tensor``'s shape, or a constant."""
        if tensor.numel() == 0:
            return
        st = _storage(tensor)
        guarded = self.protected.get(st)
        if guarded is not None:
            raise CaptureError(
                f"{self.loc}: {what} into {guarded}; a gpuopt graph cannot change its inputs, "
                "parameters or buffers: compute a new tensor instead"
            )
        buf = self.buffers.get(st)
        if buf is None:
            buf = self._buffer_of_computed(tensor, what)
        box = self._box(buf, tensor)
        if box is None and isinstance(src, Value):
            # `t = y.transpose(1, 2); t.relu_()`: t is the new value; reading
            # any other tensor of that memory afterwards is refused.
            buf.version += 1
            lo, hi = _extent(tensor)
            buf.log.append((buf.version, lo, hi, f"{self.loc}: {what}"))
            buf.broken = buf.broken or f"{self.loc}: {what}"
            self.written.add(st)
            self.values[id(tensor)] = src
            self.bound_at[id(tensor)] = buf.version
            self.lazy.discard(id(tensor))
            return
        if box is None:
            raise CaptureError(
                f"{self.loc}: {what} writes into a view gpuopt cannot express as a box of the tensor "
                "it views (a reshape of part of it); write into that tensor's own "
                "slices, or compute a new tensor"
            )
        frame, start, size, step, dims = box
        if frame != buf.frame:  # a write through a reshaped view of the whole memory
            if buf.base is not None or buf.writes:
                base = self._reshape_v(self.materialize(buf, what), frame)
                buf.base, buf.fill, buf.writes = base, None, []
            buf.frame = frame
        piece = self._to_box(src, size, dims) if isinstance(src, Value) else float(src)
        if any(s != 1 for s in step):
            buf.writes.append(PendingWrite(tuple(start), tuple(size), piece, self.loc, tuple(step)))
        elif list(size) == list(frame):
            buf.writes, buf.broken = [], None
            if isinstance(piece, Value):
                buf.base, buf.fill = piece, None
            else:
                buf.base, buf.fill = None, piece
        elif not (
            buf.writes
            and (buf.writes[-1].start, buf.writes[-1].size, buf.writes[-1].step)
            == (tuple(start), tuple(size), ())
            and buf.writes[-1].src == piece
        ):  # `out[i] += y` writes the sum twice: by add_, then by __setitem__
            buf.writes.append(PendingWrite(tuple(start), tuple(size), piece, self.loc))
        buf.version += 1
        lo, hi = _extent(tensor)
        buf.log.append((buf.version, lo, hi, f"{self.loc}: {what}"))
        self.written.add(st)
        self.keep_alive.append(tensor)
        self.by_storage.setdefault(st, {})[id(tensor)] = tensor
        if isinstance(src, Value):
            self.values[id(tensor)] = src
            self.bound_at[id(tensor)] = buf.version
            self.lazy.discard(id(tensor))
        else:
            self.track(tensor)

    def _strided(self, prev: Value | _Const, frame: list[int], w: PendingWrite) -> Value:
        """``prev`` with the strided box of ``w`` replaced by its source: each
        strided dim D (step s) padded to a multiple of s and split into
        (D / s, s), where the box has step 1; written there (onto constants, a
        pad of the source), merged back and cropped. Exact."""
        shape: list[int] = []
        box_start: list[int] = []
        box_size: list[int] = []
        crop = [0] * len(frame)
        for k, (d, a, n, s) in enumerate(zip(frame, w.start, w.size, w.step)):
            if s == 1:
                shape.append(d), box_start.append(a), box_size.append(n)
                continue
            padded = -(-d // s) * s
            crop[k] = padded - d
            shape += [padded // s, s]
            box_start += [a // s, a % s]
            box_size += [n, 1]
        src = self._reshape_v(w.src, tuple(box_size)) if isinstance(w.src, Value) else w.src
        if isinstance(prev, _Const):
            fill = 0.0 if prev.value is None else prev.value  # None: covered, never seen
            high = [n - a - m for n, a, m in zip(shape, box_start, box_size)]
            value = self._pad_v(src, box_start, high, fill, w.loc)  # type: ignore[arg-type]
        else:
            whole = self._pad_v(prev, [0] * len(frame), crop, 0.0, w.loc)
            whole = self._reshape_v(whole, tuple(shape))
            value = self._insert(whole, shape, box_start, box_size, src, w.loc)
        value = self._reshape_v(value, tuple(n + c for n, c in zip(frame, crop)))
        return self._slice_v(value, [0] * len(frame), frame, [1] * len(frame))

    def _apply(self, prev: Value, frame: list[int], w: PendingWrite) -> Value:
        if w.strided():
            return self._strided(prev, frame, w)
        return self._insert(prev, frame, list(w.start), list(w.size), w.src, w.loc)

    def _buffer_of_computed(self, tensor: torch.Tensor, what: str) -> Buffer:
        """The buffer of a computed tensor's storage, at its first write: its
        frame, and its value from a tensor covering all of it."""
        st = _storage(tensor)
        numel = _storage_numel(tensor)
        known = [
            t
            for tid, t in self.by_storage.get(st, {}).items()
            if tid in self.values and tid not in self.rebound
        ]
        frame = next((tuple(t.shape) for t in [tensor, *known] if _is_frame(t, numel)), None)
        if frame is None:
            frame = next((f for t in [tensor, *known] if (f := _dense_frame(t, numel)) is not None), None)
        whole = None
        if frame is not None:
            for t in known:
                box = box_in_frame(t, frame)
                if box is not None and math.prod(box[1]) == numel:
                    whole = (t, box)
                    break
            target = box_in_frame(tensor, frame)
            if whole is None and (target is None or math.prod(target[1]) != numel):
                frame = None
        if frame is None:
            raise CaptureError(
                f"{self.loc}: {what} writes into part of a tensor whose whole gpuopt does not "
                "track; compute a new tensor instead"
            )
        base = None
        if whole is not None:
            t, (_, size, _, dims) = whole
            base = self._to_box(self.values[id(t)], size, dims)
        buf = Buffer(frame, base, None, "")
        self.buffers[st] = buf
        return buf

    def materialize(self, buf: Buffer, what: str) -> Value:
        """The buffer's whole value in its frame, as functional seg ops."""
        if self.loc is not None:
            return self._materialize(buf, what)
        # Read as an output: the ops (and errors) at the line of the last write.
        self.loc = buf.writes[-1].loc if buf.writes else buf.origin_loc
        try:
            return self._materialize(buf, what)
        finally:
            self.loc = None

    def _materialize(self, buf: Buffer, what: str) -> Value:
        if buf.broken is not None:
            raise CaptureError(
                f"{buf.broken} changed memory that {what} at {self.loc} shares through a view gpuopt "
                "cannot express as a box of it (a reshape of part of it); gpuopt would read "
                "the old value: write the op out of place"
            )
        if buf.base is None and buf.fill is None:
            unset = self._unset(buf)
            if unset is not None:
                raise CaptureError(
                    f"{self.loc}: {what} reads uninitialized memory: {buf.origin} is read with "
                    f"elements no write set ({unset}); fill it first (zero_(), fill_(v)) or "
                    "create it with torch.zeros or torch.full"
                )
        if not buf.writes:
            if buf.base is None:
                self._constant_error(buf, what)
            return buf.base  # type: ignore[return-value]
        value = self._canonical(buf) if buf.base is None else None
        if value is None:
            value = self._sequential(buf, what)
        buf.base, buf.writes = value, []
        return value

    @staticmethod
    def _unset(buf: Buffer) -> str | None:
        """Elements of the frame no write sets, in words; None: every one is set."""
        if not any(w.strided() for w in buf.writes):
            rest = [([0] * len(buf.frame), list(buf.frame))]
            for w in buf.writes:
                rest = [p for s, n in rest for p in _subtract_box(s, n, w.start, w.size)]
            if not rest:
                return None
            s, n = rest[0]
            return f"the box at {_ints(s)} of size {_ints(n)}"
        mask = np.zeros(buf.frame, dtype=bool)
        for w in buf.writes:
            step = w.step or (1,) * len(w.start)
            mask[tuple(slice(a, e, st) for a, e, st in zip(w.start, w.end(), step))] = True
        if mask.all():
            return None
        first = np.argwhere(~mask)[0]
        return f"the element at {_ints(first)} and {int((~mask).sum()) - 1} others"

    def _constant_error(self, buf: Buffer, what: str) -> None:
        raise CaptureError(
            f"{self.loc}: {what} is a tensor that is neither a model input, a parameter or buffer "
            f"of the module, nor computed from them ({buf.origin}, no computed value written into "
            "it); gpuopt has no constant op: register it as a buffer of the module"
        )

    def _canonical(self, buf: Buffer) -> Value | None:
        """Tensor writes onto the fill, disjoint along one dim: one concat of pads."""
        writes = buf.writes
        if not all(isinstance(w.src, Value) and not w.strided() for w in writes):
            return None
        frame = buf.frame
        fill = 0.0 if buf.fill is None else buf.fill  # None: covered, never seen
        if len(writes) == 1:
            w = writes[0]
            high = [f - s - n for f, s, n in zip(frame, w.start, w.size)]
            return self._pad_v(w.src, list(w.start), high, fill, w.loc)  # type: ignore[arg-type]
        disjoint = []
        for d in range(len(frame)):
            order = sorted(writes, key=lambda w: w.start[d])
            if not any(a.start[d] + a.size[d] > b.start[d] for a, b in itertools.pairwise(order)):
                disjoint.append(d)
        # Prefer a dim the writes tile without gaps (a shift's group dim: the
        # writes may be disjoint along a shifted dim too, with gaps of fill),
        # else the first dim they are disjoint along; among those, one along
        # which every write lands where its slice was read (a shift's group
        # dim again: writes that tile a shifted dim of size 2 too tile both).
        candidates = [d for d in disjoint if sum(w.size[d] for w in writes) == frame[d]] or disjoint
        unshifted = [d for d in candidates if all(self._read_at(w, d) for w in writes)]
        for d in (unshifted or candidates)[:1]:
            order = sorted(writes, key=lambda w: w.start[d])
            pieces = []
            for i, w in enumerate(order):
                low = list(w.start)
                high = [f - s - n for f, s, n in zip(frame, w.start, w.size)]
                # A gap of fill before the first piece is its low padding along
                # d, every other gap the high padding of the piece before it.
                low[d] = w.start[d] if i == 0 else 0
                end = order[i + 1].start[d] if i + 1 < len(order) else frame[d]
                high[d] = end - w.start[d] - w.size[d]
                pieces.append(self._pad_v(w.src, low, high, fill, w.loc))  # type: ignore[arg-type]
            return self._concat_v(pieces, d)
        return None

    def _read_at(self, w: PendingWrite, d: int) -> bool:
        """Whether write ``w``'s tensor was sliced, along ``d``, from where it
        is written (a tensor not made by a slice: from 0)."""
        start, size = self.slice_boxes.get(w.src.name, ((0,) * len(w.start), w.src.shape))  # type: ignore[union-attr]
        return start[d] == w.start[d] and size[d] == w.size[d]

    def _sequential(self, buf: Buffer, what: str) -> Value:
        """Writes applied in order over the previous content (the general form)."""
        frame = list(buf.frame)
        prev: Value | _Const = buf.base if buf.base is not None else _Const(buf.fill)
        deferred: list[PendingWrite] = []
        for w in buf.writes:
            if isinstance(prev, Value):
                prev = self._apply(prev, frame, w)
                continue
            if not isinstance(w.src, Value):
                deferred.append(w)  # a constant onto constants: wait for a tensor
                continue
            if w.strided():
                prev = self._strided(prev, frame, w)
            else:
                fill = 0.0 if prev.value is None else prev.value
                high = [f - s - n for f, s, n in zip(frame, w.start, w.size)]
                prev = self._pad_v(w.src, list(w.start), high, fill, w.loc)
            if deferred:
                # The constants written before, then this write over them again.
                for c in deferred:
                    prev = self._apply(prev, frame, c)
                prev = self._apply(prev, frame, w)
                deferred = []
        if not isinstance(prev, Value):
            self._constant_error(buf, what)
        return prev  # type: ignore[return-value]

    def _insert(
        self,
        prev: Value,
        shape: list[int],
        start: list[int],
        size: list[int],
        src: Value | float,
        loc: Location | None,
    ) -> Value:
        """``prev`` (of ``shape``) with the box (start, size) replaced by ``src``."""
        k = next(d for d in range(len(shape)) if start[d] != 0 or size[d] != shape[d])
        s, e = start[k], start[k] + size[k]
        before = after = None
        if s > 0:
            before = self._slice_along(prev, shape, k, 0, s)
        if e < shape[k]:
            after = self._slice_along(prev, shape, k, e, shape[k] - e)
        rest = [d for d in range(k + 1, len(shape)) if start[d] != 0 or size[d] != shape[d]]
        if not rest:
            mid: Value | float = src
        else:
            mshape = list(shape)
            mshape[k] = size[k]
            mstart = list(start)
            mstart[k] = 0
            middle = self._slice_along(prev, shape, k, s, size[k])
            mid = self._insert(middle, mshape, mstart, size, src, loc)
        if not isinstance(mid, Value):
            # A constant block: padding of a neighbour along k.
            if after is not None:
                low = [0] * len(shape)
                low[k] = size[k]
                after = self._pad_v(after, low, [0] * len(shape), mid, loc)
            else:
                high = [0] * len(shape)
                high[k] = size[k]
                before = self._pad_v(before, [0] * len(shape), high, mid, loc)  # type: ignore[arg-type]
            pieces = [p for p in (before, after) if p is not None]
        else:
            pieces = [p for p in (before, mid, after) if p is not None]
        return self._concat_v(pieces, k)

    # -- emission -------------------------------------------------------------

    def _line(
        self,
        op: str,
        operands: Sequence[Value],
        attrs: str,
        shape: tuple[int, ...],
        type_sig: str | None = None,
        loc: Location | None = None,
    ) -> Value:
        """Appends ``%r = seg.<op> operands attrs : types`` and returns ``%r``."""
        ssa = f"%{self.counter}"
        self.counter += 1
        if type_sig is None:
            ins = ", ".join(tensor_type(o.shape) for o in operands)
            type_sig = f"{ins} -> {tensor_type(shape)}"
        text = f"{ssa} = seg.{op} " + ", ".join(o.name for o in operands)
        if attrs:
            text += " " + attrs
        where = loc.mlir() if loc is not None else self.loc_text()
        text += f" : {type_sig} {where}"
        self.lines.append(text)
        self.op_counts[op] = self.op_counts.get(op, 0) + 1
        return Value(ssa, shape)

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
        v = self._line(op, operands, attrs, tuple(result.shape), type_sig)
        self.bind(result, v)
        return v

    def _permute_v(self, value: Value, perm: Sequence[int]) -> Value:
        if list(perm) == list(range(len(perm))):
            return value
        shape = tuple(value.shape[p] for p in perm)
        sig = f"{tensor_type(value.shape)} -> {tensor_type(shape)}"
        return self._line("permute", [value], f"dims = {_ints(perm)}", shape, sig)

    def _from_box(self, value: Value, size: Sequence[int], dims: list[int], shape: tuple[int, ...]) -> Value:
        """A box's value (frame order) as the tensor of ``shape`` viewing it along ``dims``."""
        order = sorted(dims)
        if dims == order:
            return self._reshape_v(value, shape)
        v = self._reshape_v(value, tuple(size[k] for k in order))
        v = self._permute_v(v, [order.index(k) for k in dims])
        return self._reshape_v(v, shape)

    def _to_box(self, value: Value, size: Sequence[int], dims: list[int]) -> Value:
        """A value of the tensor viewing a box along ``dims`` as the box's value."""
        order = sorted(dims)
        if dims == order:
            return self._reshape_v(value, tuple(size))
        v = self._reshape_v(value, tuple(size[k] for k in dims))
        v = self._permute_v(v, [dims.index(k) for k in order])
        return self._reshape_v(v, tuple(size))

    def _reshape_v(self, value: Value, shape: tuple[int, ...]) -> Value:
        if value.shape == shape:
            return value
        return self._line(
            "reshape", [value], "", shape, f"{tensor_type(value.shape)} -> {tensor_type(shape)}"
        )

    def _slice_v(self, value: Value, start: Sequence[int], size: Sequence[int], step: Sequence[int]) -> Value:
        if list(size) == list(value.shape) and all(s == 0 for s in start):
            return value
        attrs = f"start = {_ints(start)} size = {_ints(size)} step = {_ints(step)}"
        return self._note_slice(
            self._line(
                "slice", [value], attrs, tuple(size), f"{tensor_type(value.shape)} -> {tensor_type(size)}"
            ),
            start,
            size,
            step,
        )

    def _note_slice(
        self, result: Value, start: Sequence[int], size: Sequence[int], step: Sequence[int]
    ) -> Value:
        if all(s == 1 for s in step):
            self.slice_boxes[result.name] = (tuple(start), tuple(size))
        return result

    def _slice_along(self, value: Value, shape: Sequence[int], dim: int, start: int, size: int) -> Value:
        st, sz = [0] * len(shape), list(shape)
        st[dim], sz[dim] = start, size
        return self._slice_v(value, st, sz, [1] * len(shape))

    def _pad_v(
        self, value: Value, low: Sequence[int], high: Sequence[int], fill: float, loc: Location | None
    ) -> Value:
        if all(p == 0 for p in list(low) + list(high)):
            return value
        shape = tuple(n + a + b for n, a, b in zip(value.shape, low, high))
        attrs = f"low = {_ints(low)} high = {_ints(high)} value = {_float(fill)}"
        return self._line(
            "pad", [value], attrs, shape, f"{tensor_type(value.shape)} -> {tensor_type(shape)}", loc
        )

    def _concat_v(self, values: Sequence[Value], dim: int) -> Value:
        if len(values) == 1:
            return values[0]
        shape = list(values[0].shape)
        shape[dim] = sum(v.shape[dim] for v in values)
        return self._line("concat", values, f"dim = {dim}", tuple(shape))

    def broadcast(self, value: Value, shape: Sequence[int]) -> Value:
        """``value`` broadcast to ``shape`` as PyTorch does (size-1 dims repeated by concat)."""
        shape = tuple(shape)
        if value.shape == shape:
            return value
        src = tuple(value.shape)
        if len(src) > len(shape) and all(n == 1 for n in src[: len(src) - len(shape)]):
            src = src[len(src) - len(shape) :]
        padded = (1,) * (len(shape) - len(src)) + src
        if len(padded) != len(shape) or any(a not in (1, b) for a, b in zip(padded, shape)):
            raise CaptureError(f"{self.loc}: cannot broadcast a {list(value.shape)} tensor to {list(shape)}")
        v = self._reshape_v(value, padded)
        for d, (a, b) in enumerate(zip(padded, shape)):
            if a != b:
                v = self._concat_v([v] * b, d)
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
        return self._note_slice(
            self.emit("slice", [value], attrs, result, f"{tensor_type(value.shape)} -> {tensor_type(size)}"),
            start,
            size,
            step,
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
