"""The op handlers of the capture (gpuopt.capture): torch call -> `seg` op(s).

``HANDLERS`` maps every torch function or tensor method the capture supports
to the handler that records it with the :class:`GraphBuilder`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from gpuopt.capture_builder import CaptureError, GraphBuilder, _float, _ints, _pair, tensor_type

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
    # seg.gelu's approximate is an enum attribute: a bare keyword, default none.
    attrs = "approximate = tanh" if approximate == "tanh" else ""
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
        _getitem_gather(b, result, x, index)
        return
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


def _getitem_gather(b: GraphBuilder, result: T, x: T, index: tuple) -> None:
    """``x[:, idx]``: one constant integer index (list or 1-D tensor), every other entry ``:``."""
    advanced = [k for k, i in enumerate(index) if isinstance(i, (torch.Tensor, list, bool))]
    rest_full = all(i == slice(None) or i is Ellipsis for k, i in enumerate(index) if k not in advanced)
    ellipses = sum(1 for i in index if i is Ellipsis)
    tensor_index = index[advanced[0]] if len(advanced) == 1 else None
    if (
        len(advanced) != 1
        or not rest_full
        or ellipses > 1
        or isinstance(tensor_index, bool)
        or (isinstance(tensor_index, torch.Tensor) and tensor_index.dtype == torch.bool)
        or (isinstance(tensor_index, list) and any(isinstance(i, bool) for i in tensor_index))
    ):
        raise CaptureError(
            f"{b.loc}: advanced (tensor/list/bool) indexing is not supported, except one constant "
            "integer index with every other entry ':' (x[:, idx])"
        )
    k = advanced[0]
    if ellipses and index.index(Ellipsis) < k:
        k = x.dim() - (len(index) - k)
    if isinstance(tensor_index, torch.Tensor) and tensor_index.dim() != 1:
        raise CaptureError(f"{b.loc}: indexing with a {tensor_index.dim()}-d index tensor is not supported")
    _gather(b, x, k, _constant_indices(b, tensor_index, x.shape[k], "indexing"), result)


# torch._C._nn.pad: what Dynamo's graphs call for F.pad (same arguments).
@_register(F.pad, torch._C._nn.pad, torch.constant_pad_nd)
def _pad(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    pad = list(_arg(args, kwargs, 1, "pad"))
    mode = _arg(args, kwargs, 2, "mode", "constant") if len(args) > 2 or "mode" in kwargs else "constant"
    value = _arg(args, kwargs, 3, "value", 0.0) if len(args) > 3 or "value" in kwargs else 0.0
    if isinstance(mode, (int, float)):  # torch.constant_pad_nd(input, pad, value)
        mode, value = "constant", mode
    if mode == "circular":
        _circular_pad(b, result, x, pad)
        return
    if mode != "constant":
        raise CaptureError(f"{b.loc}: pad mode '{mode}' is not supported (constant, circular)")
    rank = x.dim()
    low, high = [0] * rank, [0] * rank
    for k in range(len(pad) // 2):
        low[rank - 1 - k], high[rank - 1 - k] = int(pad[2 * k]), int(pad[2 * k + 1])
    v = b.value(x, "pad input")
    # Negative padding crops: a slice first, then the non-negative padding.
    if any(p < 0 for p in low + high):
        start = [max(0, -p) for p in low]
        size = [x.shape[d] - max(0, -low[d]) - max(0, -high[d]) for d in range(rank)]
        if any(n <= 0 for n in size):
            raise CaptureError(
                f"{b.loc}: pad {pad} crops every element of a dim of the {list(x.shape)} input: "
                "the result is a constant, and gpuopt has no constant op"
            )
        v = b.slice(v, start, size, [1] * rank, torch.empty(size))
        low, high = [max(0, p) for p in low], [max(0, p) for p in high]
    if all(p == 0 for p in low + high):
        b.bind(result, v)
        return
    attrs = f"low = {_ints(low)} high = {_ints(high)} value = {_float(value or 0.0)}"
    b.emit("pad", [v], attrs, result, f"{tensor_type(v.shape)} -> {tensor_type(result.shape)}")


def _circular_pad(b: GraphBuilder, result: T, x: T, pad: list) -> None:
    """Circular padding as a concat of the wrapped slices, dim by dim (exact)."""
    v = b.value(x, "pad input")
    shape = list(x.shape)
    for k in range(len(pad) // 2):
        d = x.dim() - 1 - k
        low, high, n = int(pad[2 * k]), int(pad[2 * k + 1]), shape[d]
        if low < 0 or high < 0 or low > n or high > n:
            raise CaptureError(
                f"{b.loc}: circular pad ({low}, {high}) of a dim of size {n}; gpuopt captures "
                "circular pads between 0 and the size"
            )
        pieces = []
        if low:
            pieces.append(b._slice_along(v, shape, d, n - low, low))
        pieces.append(v)
        if high:
            pieces.append(b._slice_along(v, shape, d, 0, high))
        v = b._concat_v(pieces, d)
        shape[d] = n + low + high
    b.alias(result, v)


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


@_register(T.select, torch.select)
def _select(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    dim = _dim(int(_arg(args, kwargs, 1, "dim")), x.dim())
    index = int(_arg(args, kwargs, 2, "index"))
    index = index + x.shape[dim] if index < 0 else index
    start, size = [0] * x.dim(), list(x.shape)
    start[dim], size[dim] = index, 1
    sliced = b.slice(b.value(x, "select input"), start, size, [1] * x.dim(), torch.empty(size))
    b.reshape(sliced, result)


# ---------------------------------------------------------------------------
# In-place writes: fresh memory and what is written into it (capture_builder's
# Buffer). A creator registers its result as a buffer holding its fill value;
# slice assignment, copy_, fill_ and zero_ declare their writes; the in-place
# arithmetic ops above (relu_, add_, +=, out=) rebind the tensor they wrote.
# ---------------------------------------------------------------------------

CREATORS: dict[Any, Handler] = {}


def _creator(name: str, fill_index: int | None, fill: float | None, *funcs: Any) -> None:
    def handle(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(result, torch.Tensor) or result.dtype != torch.float32 or not result.numel():
            return  # an index or mask: not graph data, never tracked
        value = fill if fill_index is None else _arg(args, kwargs, fill_index, "fill_value")
        if isinstance(value, torch.Tensor) or (value is not None and not math.isfinite(float(value))):
            raise CaptureError(f"{b.loc}: {name} with fill value {value!r}; gpuopt captures finite numbers")
        if kwargs.get("out") is not None:  # torch.zeros(shape, out=t): a write into t
            if value is None:
                raise CaptureError(
                    f"{b.loc}: {name} with out= leaves the tensor undefined; use zero_() or fill_()"
                )
            _write_from(b, kwargs["out"], value, name)
            return
        b.new_buffer(result, None if value is None else float(value), f"{name} at {b.loc}")

    for f in funcs:
        CREATORS[f] = handle


_creator("torch.zeros", None, 0.0, torch.zeros)
_creator("torch.zeros_like", None, 0.0, torch.zeros_like)
_creator("Tensor.new_zeros", None, 0.0, T.new_zeros)
_creator("torch.ones", None, 1.0, torch.ones)
_creator("torch.ones_like", None, 1.0, torch.ones_like)
_creator("Tensor.new_ones", None, 1.0, T.new_ones)
_creator("torch.full", 1, None, torch.full)
_creator("torch.full_like", 1, None, torch.full_like)
_creator("Tensor.new_full", 2, None, T.new_full)
_creator("torch.empty", None, None, torch.empty)
_creator("torch.empty_like", None, None, torch.empty_like)
_creator("Tensor.new_empty", None, None, T.new_empty)


def _write_from(b: GraphBuilder, target: T, src: Any, call: str) -> None:
    """``target`` (a view) := ``src``, a tensor broadcast to it or a number."""
    what = f"in-place write {call}"
    if isinstance(src, torch.Tensor):
        value = b.broadcast(b.value(src, f"the source of {call}"), tuple(target.shape))
        b.write(target, value, what)
    elif isinstance(src, (int, float)):
        if not math.isfinite(float(src)):
            raise CaptureError(f"{b.loc}: {call} of {src!r}; gpuopt captures finite constants")
        b.write(target, float(src), what)
    else:
        raise CaptureError(f"{b.loc}: {call} of a {type(src).__name__}; expected a tensor or a number")


def _check_target_index(b: GraphBuilder, index: Any, call: str) -> None:
    for i in index if isinstance(index, tuple) else (index,):
        if i is None:
            raise CaptureError(
                f"{b.loc}: {call} with None (a new axis) in the target index is not supported; "
                "index the tensor without it"
            )
        if isinstance(i, slice) and all(isinstance(v, int) or v is None for v in (i.start, i.stop, i.step)):
            continue
        if i is Ellipsis or (isinstance(i, int) and not isinstance(i, bool)):
            continue
        if isinstance(i, torch.Tensor):
            kind = "tensor index"
        elif isinstance(i, (bool, list)):
            kind = f"{type(i).__name__} index"
        elif isinstance(i, slice):
            kind = "slice whose bounds are not integers"
        else:
            kind = f"{type(i).__name__} index"
        raise CaptureError(
            f"{b.loc}: {call} with a {kind}; gpuopt captures slice assignment into boxes "
            "(integers, slices, '...'): write the pieces one slice at a time"
        )


@_register(T.__setitem__)
def _setitem(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    x, index, src = args[0], args[1], args[2]
    call = "torch.Tensor.__setitem__"
    _check_target_index(b, index, call)
    with torch._C.DisableTorchFunction():
        view = x[index]
    _write_from(b, view, src, call)


@_register(T.copy_)
def _copy(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    _write_from(b, args[0], _arg(args, kwargs, 1, "src"), "torch.Tensor.copy_")


@_register(T.fill_, torch.fill_)
def _fill(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    _write_from(b, args[0], _arg(args, kwargs, 1, "value"), "torch.Tensor.fill_")


@_register(T.zero_, torch.zero_)
def _zero(b: GraphBuilder, result: Any, *args: Any, **kwargs: Any) -> None:
    _write_from(b, args[0], 0.0, "torch.Tensor.zero_")


# ---------------------------------------------------------------------------
# Constant gathers: index_select / x[:, idx] with a constant index, as a
# concat of the slices of its runs of consecutive indices.
# ---------------------------------------------------------------------------


def _constant_indices(b: GraphBuilder, index: Any, n: int, call: str) -> list[int]:
    if isinstance(index, torch.Tensor):
        # A tensor made in forward, or an integer buffer (never a weight).
        computed = id(index) in b.values or id(index) in b.lazy
        if computed or index.is_floating_point() or index.dim() > 1:
            raise CaptureError(
                f"{b.loc}: {call} with a non-constant index; gpuopt captures a constant 1-D integer "
                "index (a list, or a tensor made in forward or an integer buffer)"
            )
        values = [int(i) for i in index.reshape(-1).tolist()]
    else:
        values = [int(i) for i in index]
    if not values:
        raise CaptureError(f"{b.loc}: {call} with an empty index is not supported")
    return [i + n if i < 0 else i for i in values]


def _gather(b: GraphBuilder, x: T, dim: int, indices: list[int], result: T) -> None:
    v = b.value(x, "index_select input")
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    pieces = [b._slice_along(v, x.shape, dim, s, n) for s, n in runs]
    value = b._concat_v(pieces, dim)
    b.alias(result, value)


@_register(torch.index_select, T.index_select)
def _index_select(b: GraphBuilder, result: T, *args: Any, **kwargs: Any) -> None:
    x = _arg(args, kwargs, 0, "input")
    dim = _dim(int(_arg(args, kwargs, 1, "dim")), x.dim())
    index = _arg(args, kwargs, 2, "index")
    indices = _constant_indices(b, index, x.shape[dim], "index_select")
    if isinstance(index, torch.Tensor) and index.dim() == 0:
        raise CaptureError(f"{b.loc}: index_select with a 0-d index is not supported")
    _gather(b, x, dim, indices, result)
