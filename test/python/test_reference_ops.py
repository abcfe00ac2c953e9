"""Every seg op through `gpuopt-run` (the reference and the CPU backend) against PyTorch.

Each case writes a one-op graph, random inputs and random weights, runs it
with gpuopt-run and compares with the corresponding torch / torch.nn.functional
call on the same data. Tolerance: relative L2 error <= 1e-6 and elementwise
|a - e| <= 1e-5 + 1e-5 |e| (the reference backend calls the same ATen kernels,
so the only differences come from the file round trip and thread scheduling;
the CPU backend's loops sum in their own order, which the bound allows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import rel_l2

from gpuopt.tools import run_graph

RTOL = 1e-5
ATOL = 1e-5
REL_L2 = 1e-6


def ty(shape: tuple[int, ...]) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + "f32>"


@dataclass
class Case:
    name: str
    inputs: list[tuple[int, ...]]
    body: str  # uses %a0, %a1 ... for inputs, %p_<name> for params, result in %r
    out_shape: tuple[int, ...]
    torch_fn: Callable[..., torch.Tensor]
    params: dict[str, tuple[int, ...]] = field(default_factory=dict)
    positive: set[str] = field(default_factory=set)  # params that must be > 0

    def mlir(self) -> str:
        args = ", ".join(f"%a{i}: {ty(s)}" for i, s in enumerate(self.inputs))
        lines = [f"func.func @forward({args}) -> {ty(self.out_shape)} {{"]
        for name, shape in self.params.items():
            lines.append(f'  %p_{name} = seg.param "{name}" : {ty(shape)}')
        lines.append("  " + self.body.replace("\n", "\n  "))
        lines.append(f"  return %r : {ty(self.out_shape)}")
        lines.append("}")
        return "\n".join(lines)


def conv_case(name, x, w, bias, stride, padding, dilation, groups):
    n, _, h, wd = x
    o = w[0]
    ho = (h + 2 * padding[0] - dilation[0] * (w[2] - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (w[3] - 1) - 1) // stride[1] + 1
    out = (n, o, ho, wo)
    params = {"w": w} | ({"b": (o,)} if bias else {})
    b_op = ", %p_b" if bias else ""
    b_ty = f", {ty((o,))}" if bias else ""
    body = (
        f"%r = seg.conv2d %a0, %p_w{b_op} stride = {list(stride)} padding = {list(padding)} "
        f"dilation = {list(dilation)} groups = {groups} : {ty(x)}, {ty(w)}{b_ty} -> {ty(out)}"
    )
    return Case(
        name,
        [x],
        body,
        out,
        lambda a0, w, b=None: F.conv2d(a0, w, b, stride, padding, dilation, groups),
        params,
    )


def conv_t_case(name, x, w, bias, stride, padding, output_padding, dilation, groups):
    n, _, h, wd = x
    o = w[1] * groups
    hs = [
        (d - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w[2 + i] - 1) + output_padding[i] + 1
        for i, d in enumerate((h, wd))
    ]
    out = (n, o, hs[0], hs[1])
    params = {"w": w} | ({"b": (o,)} if bias else {})
    b_op = ", %p_b" if bias else ""
    b_ty = f", {ty((o,))}" if bias else ""
    body = (
        f"%r = seg.conv_transpose2d %a0, %p_w{b_op} stride = {list(stride)} "
        f"padding = {list(padding)} output_padding = {list(output_padding)} "
        f"dilation = {list(dilation)} groups = {groups} : {ty(x)}, {ty(w)}{b_ty} -> {ty(out)}"
    )
    return Case(
        name,
        [x],
        body,
        out,
        lambda a0, w, b=None: F.conv_transpose2d(a0, w, b, stride, padding, output_padding, groups, dilation),
        params,
    )


def unary(name, op, fn, shape=(2, 3, 5, 7), attrs=""):
    return Case(name, [shape], f"%r = seg.{op} %a0{attrs} : {ty(shape)}", shape, fn)


def binary(name, op, fn, a, b, out):
    body = f"%r = seg.{op} %a0, %a1 : {ty(a)}, {ty(b)} -> {ty(out)}"
    return Case(name, [a, b], body, out, fn)


def pool_case(name, x, k, s, p, d, ceil):
    ref = F.max_pool2d(torch.zeros(x), k, s, p, d, ceil_mode=ceil)
    out = tuple(ref.shape)
    body = (
        f"%r = seg.max_pool2d %a0 kernel = {list(k)} stride = {list(s)} padding = {list(p)} "
        f"dilation = {list(d)} ceil_mode = {str(ceil).lower()} : {ty(x)} -> {ty(out)}"
    )
    return Case(name, [x], body, out, lambda a0: F.max_pool2d(a0, k, s, p, d, ceil_mode=ceil))


def upsample_case(name, x, size, mode, align=None):
    out = (x[0], x[1], size[0], size[1])
    if mode == "bilinear":
        body = (
            f"%r = seg.upsample_bilinear %a0 size = {list(size)} "
            f"align_corners = {str(align).lower()} : {ty(x)} -> {ty(out)}"
        )
        fn = lambda a0: F.interpolate(a0, size=size, mode="bilinear", align_corners=align)
    else:
        body = f"%r = seg.upsample_nearest %a0 size = {list(size)} : {ty(x)} -> {ty(out)}"
        fn = lambda a0: F.interpolate(a0, size=size, mode="nearest")
    return Case(name, [x], body, out, fn)


def slice_case(name, x, start, size, step):
    body = (
        f"%r = seg.slice %a0 start = {list(start)} size = {list(size)} step = {list(step)} "
        f": {ty(x)} -> {ty(tuple(size))}"
    )

    def fn(a0):
        idx = tuple(slice(st, st + (sz - 1) * sp + 1, sp) for st, sz, sp in zip(start, size, step))
        return a0[idx]

    return Case(name, [x], body, tuple(size), fn)


def roll_case(name, x, shifts, dims):
    body = f"%r = seg.roll %a0 shifts = {list(shifts)} dims = {list(dims)} : {ty(x)}"
    return Case(name, [x], body, x, lambda a0: torch.roll(a0, list(shifts), list(dims)))


def pad_case(name, x, low, high, value):
    out = tuple(d + lo + hi for d, lo, hi in zip(x, low, high))
    body = f"%r = seg.pad %a0 low = {list(low)} high = {list(high)} value = {value!r} : {ty(x)} -> {ty(out)}"
    torch_pad = []
    for lo, hi in zip(reversed(low), reversed(high)):
        torch_pad += [lo, hi]
    return Case(name, [x], body, out, lambda a0: F.pad(a0, torch_pad, value=value))


def torch_channel_shift(x: torch.Tensor, dh: list[int], dw: list[int], mode: str) -> torch.Tensor:
    """seg.channel_shift written with PyTorch: per-channel rolls (cyclic) or
    pad -> roll -> crop (zero), the idioms the op replaces."""
    c, h, w = x.shape[1], x.shape[2], x.shape[3]
    dh = dh or [0] * c
    dw = dw or [0] * c
    if mode == "cyclic":
        return torch.cat([torch.roll(x[:, i : i + 1], (dh[i], dw[i]), (2, 3)) for i in range(c)], 1)
    ph, pw = max(h, max(map(abs, dh))), max(w, max(map(abs, dw)))
    padded = F.pad(x, (pw, pw, ph, ph))
    rolled = torch.cat([torch.roll(padded[:, i : i + 1], (dh[i], dw[i]), (2, 3)) for i in range(c)], 1)
    return rolled[:, :, ph : ph + h, pw : pw + w]


def shift_case(name, x, dh, dw, mode):
    body = f"%r = seg.channel_shift %a0 offsets_h = {list(dh)} offsets_w = {list(dw)} mode = {mode} : {ty(x)}"
    return Case(name, [x], body, x, lambda a0: torch_channel_shift(a0, list(dh), list(dw), mode))


def torch_group_shift(
    x: torch.Tensor, g: int, dims: list[int], offsets: list[int], mode: str
) -> torch.Tensor:
    """seg.shift written with PyTorch: each index of dim g rolled along dims
    (cyclic), or zero-padded by more than any offset, rolled and cropped (zero)."""
    groups = x.shape[g]
    pads = [max(x.shape[d], *(abs(o) for o in offsets)) for d in dims]
    if mode == "zero":
        spec = [0] * (2 * x.dim())
        for d, p in zip(dims, pads):
            spec[2 * (x.dim() - 1 - d)] = spec[2 * (x.dim() - 1 - d) + 1] = p
        x = F.pad(x, spec)
    parts = []
    for i in range(groups):
        shifts = [offsets[k * groups + i] for k in range(len(dims))]
        parts.append(torch.roll(x.narrow(g, i, 1), shifts, dims))
    out = torch.cat(parts, g)
    if mode == "zero":
        for d, p in zip(dims, pads):
            out = out.narrow(d, p, out.shape[d] - 2 * p)
    return out


def group_shift_case(name, x, g, dims, offsets, mode):
    body = f"%r = seg.shift %a0 group_dim = {g} dims = {list(dims)} offsets = {list(offsets)} mode = {mode} : {ty(x)}"
    return Case(name, [x], body, x, lambda a0: torch_group_shift(a0, g, list(dims), list(offsets), mode))


def fused_conv_case(name, x, w, dh, dw, mode, stride, padding, groups, activation, residual):
    o = w[0]
    ho = (x[2] + 2 * padding[0] - (w[2] - 1) - 1) // stride[0] + 1
    wo = (x[3] + 2 * padding[1] - (w[3] - 1) - 1) // stride[1] + 1
    out = (x[0], o, ho, wo)
    inputs = [x, out] if residual else [x]
    res = " residual %a1" if residual else ""
    types = f"{ty(x)}, {ty(w)}, {ty((o,))}" + (f", {ty(out)}" if residual else "")
    body = (
        f"%r = seg.fused_conv2d %a0, %p_w, %p_b{res} offsets_h = {list(dh)} offsets_w = {list(dw)} "
        f"mode = {mode} stride = {list(stride)} padding = {list(padding)} dilation = [1, 1] "
        f"groups = {groups} activation = {activation} : ({types}) -> {ty(out)}"
    )
    acts = {
        "none": lambda t: t,
        "relu": F.relu,
        "gelu": F.gelu,
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    }

    def fn(a0, a1=None, *, w, b):
        y = acts[activation](
            F.conv2d(torch_channel_shift(a0, list(dh), list(dw), mode), w, b, stride, padding, 1, groups)
        )
        return y + a1 if residual else y

    return Case(name, inputs, body, out, fn, {"w": w, "b": (o,)})


def deform_case(name, x, w, stride, padding, dilation, groups, offset_groups, offset_batch):
    """seg.deform_conv2d vs torchvision.ops.deform_conv2d. The offsets are a
    random input times a random parameter `scale`, so that they reach a few
    pixels (and outside the map at the borders)."""
    from torchvision.ops import deform_conv2d

    o = w[0]
    ho = (x[2] + 2 * padding[0] - dilation[0] * (w[2] - 1) - 1) // stride[0] + 1
    wo = (x[3] + 2 * padding[1] - dilation[1] * (w[3] - 1) - 1) // stride[1] + 1
    off = (offset_batch, 2 * offset_groups * w[2] * w[3], ho, wo)
    out = (x[0], o, ho, wo)
    body = (
        f"%s = seg.mul %a1, %p_scale : {ty(off)}, tensor<1xf32> -> {ty(off)}\n"
        f"%r = seg.deform_conv2d %a0, %s, %p_w, %p_b stride = {list(stride)} "
        f"padding = {list(padding)} dilation = {list(dilation)} groups = {groups} "
        f"offset_groups = {offset_groups} : ({ty(x)}, {ty(off)}, {ty(w)}, {ty((o,))}) -> {ty(out)}"
    )

    def fn(a0, a1, scale, w, b):
        offsets = (a1 * scale).expand(x[0], -1, -1, -1)
        return deform_conv2d(a0, offsets, w, b, stride, padding, dilation)

    return Case(name, [x, off], body, out, fn, {"scale": (1,), "w": w, "b": (o,)}, positive={"scale"})


def shift_by_deform_case(name, x, w, dh, dw, mode, stride, padding):
    o = w[0]
    ho = (x[2] + 2 * padding[0] - (w[2] - 1) - 1) // stride[0] + 1
    wo = (x[3] + 2 * padding[1] - (w[3] - 1) - 1) // stride[1] + 1
    c = x[1]
    off = (1, 2 * c * w[2] * w[3], ho, wo)
    out = (x[0], o, ho, wo)
    body = (
        f"%off = seg.shift_offsets offsets_h = {list(dh)} offsets_w = {list(dw)} mode = {mode} "
        f"input_size = [{x[2]}, {x[3]}] kernel = [{w[2]}, {w[3]}] stride = {list(stride)} "
        f"padding = {list(padding)} dilation = [1, 1] : {ty(off)}\n"
        f"%r = seg.deform_conv2d %a0, %off, %p_w stride = {list(stride)} padding = {list(padding)} "
        f"dilation = [1, 1] groups = 1 offset_groups = {c} : ({ty(x)}, {ty(off)}, {ty(w)}) -> {ty(out)}"
    )
    return Case(
        name,
        [x],
        body,
        out,
        lambda a0, w: F.conv2d(torch_channel_shift(a0, list(dh), list(dw), mode), w, None, stride, padding),
        {"w": w},
    )


BN = {"mean": (6,), "var": (6,), "g": (6,), "b": (6,)}
X4 = (2, 6, 9, 11)

CASES = [
    conv_case("conv2d_3x3_bias", (2, 4, 13, 11), (8, 4, 3, 3), True, (1, 1), (1, 1), (1, 1), 1),
    conv_case("conv2d_no_bias_stride2", (1, 3, 16, 15), (5, 3, 3, 3), False, (2, 2), (1, 1), (1, 1), 1),
    conv_case("conv2d_depthwise", (1, 8, 10, 10), (8, 1, 3, 3), True, (1, 1), (1, 1), (1, 1), 8),
    conv_case("conv2d_groups_dilation", (1, 6, 17, 12), (9, 2, 3, 2), True, (1, 2), (2, 0), (2, 3), 3),
    conv_case("conv2d_1x1", (1, 16, 7, 7), (4, 16, 1, 1), True, (1, 1), (0, 0), (1, 1), 1),
    conv_t_case(
        "conv_transpose2d_2x2_s2", (1, 8, 5, 6), (8, 4, 2, 2), True, (2, 2), (0, 0), (0, 0), (1, 1), 1
    ),
    conv_t_case(
        "conv_transpose2d_3x3_op", (2, 4, 5, 5), (4, 3, 3, 3), False, (2, 2), (1, 1), (1, 0), (1, 1), 1
    ),
    conv_t_case(
        "conv_transpose2d_groups", (1, 6, 4, 4), (6, 2, 3, 3), True, (1, 1), (1, 1), (0, 0), (2, 2), 3
    ),
    Case(
        "batch_norm",
        [X4],
        "%r = seg.batch_norm %a0, %p_mean, %p_var, %p_g, %p_b epsilon = 1.0e-05 : "
        f"{ty(X4)}, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32> -> {ty(X4)}",
        X4,
        lambda a0, mean, var, g, b: F.batch_norm(a0, mean, var, g, b, False, 0.0, 1e-5),
        BN,
        positive={"var"},
    ),
    Case(
        "fold_batch_norm_then_conv",
        [(1, 3, 7, 7)],
        "%w2, %b2 = seg.fold_batch_norm %p_w bias %p_cb, %p_mean, %p_var, %p_g, %p_b epsilon = 1.0e-03 : "
        "(tensor<6x3x3x3xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) "
        "-> (tensor<6x3x3x3xf32>, tensor<6xf32>)\n"
        "%r = seg.conv2d %a0, %w2, %b2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : "
        "tensor<1x3x7x7xf32>, tensor<6x3x3x3xf32>, tensor<6xf32> -> tensor<1x6x7x7xf32>",
        (1, 6, 7, 7),
        lambda a0, w, cb, mean, var, g, b: F.batch_norm(
            F.conv2d(a0, w, cb, 1, 1), mean, var, g, b, False, 0.0, 1e-3
        ),
        {"w": (6, 3, 3, 3), "cb": (6,)} | BN,
        positive={"var"},
    ),
    Case(
        "batch_norm_tokens",
        [(3, 6)],
        "%r = seg.batch_norm %a0, %p_mean, %p_var, %p_g, %p_b epsilon = 1.0e-03 : "
        "tensor<3x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32> -> tensor<3x6xf32>",
        (3, 6),
        lambda a0, mean, var, g, b: F.batch_norm(a0, mean, var, g, b, False, 0.0, 1e-3),
        BN,
        positive={"var"},
    ),
    Case(
        "layer_norm_last_dim",
        [(2, 10, 16)],
        "%r = seg.layer_norm %a0, %p_g, %p_b epsilon = 1.0e-05 : "
        "tensor<2x10x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x10x16xf32>",
        (2, 10, 16),
        lambda a0, g, b: F.layer_norm(a0, [16], g, b, 1e-5),
        {"g": (16,), "b": (16,)},
    ),
    Case(
        "layer_norm_two_dims",
        [(2, 5, 4, 6)],
        "%r = seg.layer_norm %a0, %p_g, %p_b epsilon = 1.0e-06 : "
        "tensor<2x5x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32> -> tensor<2x5x4x6xf32>",
        (2, 5, 4, 6),
        lambda a0, g, b: F.layer_norm(a0, [4, 6], g, b, 1e-6),
        {"g": (4, 6), "b": (4, 6)},
    ),
    Case(
        "layer_norm_channel_axis",
        [(2, 6, 3, 5)],
        "%r = seg.layer_norm %a0, %p_g, %p_b axis = 1 epsilon = 1.0e-05 : "
        "tensor<2x6x3x5xf32>, tensor<6xf32>, tensor<6xf32> -> tensor<2x6x3x5xf32>",
        (2, 6, 3, 5),
        lambda a0, g, b: F.layer_norm(a0.permute(0, 2, 3, 1), [6], g, b, 1e-5).permute(0, 3, 1, 2),
        {"g": (6,), "b": (6,)},
    ),
    Case(
        "layer_norm_first_axis",
        [(4, 3, 2)],
        "%r = seg.layer_norm %a0, %p_g, %p_b axis = 0 epsilon = 1.0e-03 : "
        "tensor<4x3x2xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x3x2xf32>",
        (4, 3, 2),
        lambda a0, g, b: F.layer_norm(a0.permute(1, 2, 0), [4], g, b, 1e-3).permute(2, 0, 1),
        {"g": (4,), "b": (4,)},
    ),
    Case(
        "linear_tokens_bias",
        [(1, 12, 16)],
        "%r = seg.linear %a0, %p_w, %p_b : tensor<1x12x16xf32>, tensor<24x16xf32>, tensor<24xf32> "
        "-> tensor<1x12x24xf32>",
        (1, 12, 24),
        lambda a0, w, b: F.linear(a0, w, b),
        {"w": (24, 16), "b": (24,)},
    ),
    Case(
        "linear_no_bias_2d",
        [(7, 5)],
        "%r = seg.linear %a0, %p_w : tensor<7x5xf32>, tensor<3x5xf32> -> tensor<7x3xf32>",
        (7, 3),
        lambda a0, w: F.linear(a0, w),
        {"w": (3, 5)},
    ),
    unary("relu", "relu", F.relu),
    unary("sigmoid", "sigmoid", torch.sigmoid),
    unary("gelu_erf", "gelu", F.gelu),
    unary("gelu_tanh", "gelu", lambda a0: F.gelu(a0, approximate="tanh"), attrs=" approximate = tanh"),
    binary("add_same", "add", torch.add, (2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 4, 5)),
    binary("add_broadcast_channel", "add", torch.add, (2, 3, 4, 5), (1, 3, 1, 1), (2, 3, 4, 5)),
    binary("add_broadcast_rank", "add", torch.add, (5,), (2, 3, 4, 5), (2, 3, 4, 5)),
    binary("mul_broadcast_both", "mul", torch.mul, (2, 1, 4), (3, 1), (2, 3, 4)),
    pool_case("max_pool2d_2x2", (1, 4, 16, 16), (2, 2), (2, 2), (0, 0), (1, 1), False),
    pool_case("max_pool2d_3x3_pad_ceil", (2, 3, 15, 14), (3, 3), (2, 2), (1, 1), (1, 1), True),
    pool_case("max_pool2d_dilated_odd", (1, 2, 11, 9), (3, 2), (2, 1), (1, 0), (2, 1), False),
    upsample_case("upsample_bilinear_x2", (1, 3, 7, 9), (14, 18), "bilinear", False),
    upsample_case("upsample_bilinear_align", (1, 3, 7, 9), (14, 18), "bilinear", True),
    upsample_case("upsample_bilinear_odd_size", (2, 2, 5, 6), (11, 7), "bilinear", False),
    upsample_case("upsample_nearest_x2", (1, 3, 6, 5), (12, 10), "nearest"),
    upsample_case("upsample_nearest_odd", (1, 3, 6, 5), (9, 7), "nearest"),
    Case(
        "concat_channels",
        [(1, 3, 4, 4), (1, 5, 4, 4), (1, 1, 4, 4)],
        "%r = seg.concat %a0, %a1, %a2 dim = 1 : tensor<1x3x4x4xf32>, tensor<1x5x4x4xf32>, "
        "tensor<1x1x4x4xf32> -> tensor<1x9x4x4xf32>",
        (1, 9, 4, 4),
        lambda a0, a1, a2: torch.cat([a0, a1, a2], 1),
    ),
    Case(
        "concat_last",
        [(2, 3), (2, 4)],
        "%r = seg.concat %a0, %a1 dim = 1 : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<2x7xf32>",
        (2, 7),
        lambda a0, a1: torch.cat([a0, a1], 1),
    ),
    slice_case("slice_channel", (1, 8, 5, 5), (0, 3, 0, 0), (1, 1, 5, 5), (1, 1, 1, 1)),
    slice_case("slice_strided", (2, 6, 9, 10), (1, 1, 2, 0), (1, 3, 3, 5), (1, 2, 3, 2)),
    pad_case("pad_spatial_zero", (1, 3, 5, 6), (0, 0, 2, 2), (0, 0, 2, 2), 0.0),
    pad_case("pad_asymmetric_value", (2, 3, 4), (1, 0, 3), (0, 2, 1), -1.5),
    roll_case("roll_positive_h", (1, 1, 8, 7), (3,), (2,)),
    roll_case("roll_negative_w", (1, 1, 8, 7), (-2,), (3,)),
    roll_case("roll_larger_than_size", (1, 2, 8, 7), (19,), (2,)),
    roll_case("roll_two_dims", (2, 3, 6, 5), (4, -7), (3, 2)),
    shift_case("channel_shift_cyclic_h", (1, 5, 6, 7), [0, 1, 2, 3, 4], [], "cyclic"),
    shift_case("channel_shift_cyclic_hw_negative", (2, 3, 5, 4), [-1, 7, 0], [2, -9, 1], "cyclic"),
    shift_case("channel_shift_zero_h", (1, 5, 6, 7), [-2, -1, 0, 1, 2], [], "zero"),
    shift_case("channel_shift_zero_beyond_size", (1, 3, 4, 5), [], [6, -1, -7], "zero"),
    # TSM: channel groups of an (N, T, C, H, W) view along T; a group dim after
    # the shifted one; offsets beyond the size, negative, both modes.
    group_shift_case("shift_tsm_zero", (2, 3, 4, 2, 3), 2, [1], [-1, 1, 0, 0], "zero"),
    group_shift_case("shift_two_dims_cyclic", (2, 3, 4, 5), 1, [2, 3], [1, -5, 0, 9, 2, -1], "cyclic"),
    group_shift_case(
        "shift_group_after_dim_zero", (4, 3, 5), 2, [0, 1], [1, -2, 5, 0, -3, 2, 1, 0, -1, 4], "zero"
    ),
    fused_conv_case(
        "fused_conv2d_1x1_cyclic",
        (1, 4, 6, 6),
        (3, 4, 1, 1),
        [0, 1, 2, 3],
        [],
        "cyclic",
        (1, 1),
        (0, 0),
        1,
        "none",
        False,
    ),
    fused_conv_case(
        "fused_conv2d_3x3_zero_stride_relu",
        (1, 4, 7, 6),
        (6, 2, 3, 3),
        [],
        [1, -1, 2, 0],
        "zero",
        (2, 1),
        (1, 1),
        2,
        "relu",
        False,
    ),
    fused_conv_case(
        "fused_conv2d_gelu_residual",
        (2, 3, 5, 5),
        (3, 3, 3, 3),
        [],
        [],
        "cyclic",
        (1, 1),
        (1, 1),
        1,
        "gelu",
        True,
    ),
    fused_conv_case(
        "fused_conv2d_gelu_tanh_shift_residual",
        (1, 2, 4, 6),
        (2, 1, 1, 1),
        [3, -1],
        [1, 1],
        "cyclic",
        (1, 1),
        (0, 0),
        2,
        "gelu_tanh",
        True,
    ),
    deform_case("deform_conv2d_3x3_groups", (2, 4, 6, 7), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2, 2, 2),
    deform_case(
        "deform_conv2d_stride_dilation_batch1_offsets",
        (2, 3, 9, 8),
        (4, 3, 3, 2),
        (2, 1),
        (2, 0),
        (2, 1),
        1,
        3,
        1,
    ),
    shift_by_deform_case(
        "shift_offsets_cyclic_3x3",
        (1, 4, 5, 6),
        (3, 4, 3, 3),
        [0, 1, 2, 3],
        [1, -1, 7, 0],
        "cyclic",
        (1, 1),
        (1, 1),
    ),
    shift_by_deform_case(
        "shift_offsets_zero_stride", (2, 3, 7, 5), (2, 3, 3, 3), [-1, 0, 2], [], "zero", (2, 2), (1, 1)
    ),
    shift_by_deform_case(
        "shift_offsets_cyclic_1x1", (1, 5, 4, 4), (2, 5, 1, 1), [], [0, 1, 2, 3, 4], "cyclic", (1, 1), (0, 0)
    ),
    Case(
        "reshape_to_tokens",
        [(1, 8, 4, 6)],
        "%r = seg.reshape %a0 : tensor<1x8x4x6xf32> -> tensor<1x8x24xf32>",
        (1, 8, 24),
        lambda a0: a0.reshape(1, 8, 24),
    ),
    Case(
        "permute_tokens",
        [(1, 8, 24)],
        "%r = seg.permute %a0 dims = [0, 2, 1] : tensor<1x8x24xf32> -> tensor<1x24x8xf32>",
        (1, 24, 8),
        lambda a0: a0.permute(0, 2, 1),
    ),
    Case(
        "permute_4d",
        [(2, 3, 4, 5)],
        "%r = seg.permute %a0 dims = [3, 1, 0, 2] : tensor<2x3x4x5xf32> -> tensor<5x3x2x4xf32>",
        (5, 3, 2, 4),
        lambda a0: a0.permute(3, 1, 0, 2),
    ),
]


@pytest.mark.parametrize("backend", ["reference", "cpu"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_matches_pytorch(case: Case, backend: str, rng: np.random.Generator) -> None:
    inputs = [rng.standard_normal(s).astype(np.float32) for s in case.inputs]
    weights = {}
    for name, shape in case.params.items():
        w = rng.standard_normal(shape).astype(np.float32)
        weights[name] = np.abs(w) + 0.1 if name in case.positive else w
    result = run_graph(case.mlir(), inputs, weights if weights else None, backend=backend)
    (actual,) = result.outputs
    with torch.no_grad():
        expected = case.torch_fn(
            *[torch.from_numpy(x) for x in inputs],
            **{k: torch.from_numpy(v) for k, v in weights.items()},
        ).numpy()
    assert actual.shape == expected.shape
    assert rel_l2(actual, expected) <= REL_L2
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


def test_every_op_is_covered() -> None:
    """A new seg op must get a case here: compare the ops used with the dialect's."""
    import re
    from pathlib import Path

    td = (Path(__file__).resolve().parents[2] / "include/gpuopt/Dialect/Seg/IR/SegOps.td").read_text()
    declared = set(re.findall(r'def Seg_\w+ : Seg_\w+<"(\w+)"', td))
    used = {"param"}
    for case in CASES:
        used |= set(re.findall(r"seg\.(\w+)", case.body))
    assert declared, "no ops found in SegOps.td"
    assert declared <= used, f"ops without a reference test: {sorted(declared - used)}"
