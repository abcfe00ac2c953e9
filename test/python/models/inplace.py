"""In-place writes, one module per kind, exported by test_export_mutation.py.

The `Unsafe*` modules write into memory the graph cannot change (an input, a
parameter, a buffer), through a view that is no box of the tensor it views (a
reshape of part of it), with an op the exporter has no functional form for, or
read such a view after its base was written; exporting them must fail and name the line marked `# WRITE`.
The `Safe*` modules write in place into intermediates (the whole tensor, a slice
of it, through a view, read again through views, their base or a detach()); the
exporter makes the writes functional, so they must export and match PyTorch.
Every module maps a (1, 4, 6, 6) input to a tensor.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class _Two(nn.Module):
    """Two convolutions of the input: fresh intermediates to write into."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(4, 4, 3, padding=1)
        self.b = nn.Conv2d(4, 4, 3, padding=1)


class SafeSetitem(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        z[:, :2] = y[:, :2]  # WRITE
        return z


class SafeSetitemAdd(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        z[:, :2] += y[:, :2]  # WRITE
        return z


class SafeReluOnView(_Two):
    def forward(self, x):
        z = self.a(x)
        F.relu_(z[:, 1:3])  # WRITE
        return z


class SafeMulOnView(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        v = z[:, :, 2:]
        v.mul_(y[:, :, 2:])  # WRITE
        return z + y


class SafeViewOfMutatedBase(_Two):
    def forward(self, x):
        z = self.a(x)
        v = z.view(1, 4, 36)
        z.relu_()  # WRITE
        return v


class SafeDetachedAlias(_Two):
    def forward(self, x):
        z = self.a(x)
        d = z.detach()
        z.sigmoid_()  # WRITE
        return d + z


class SafeCopy(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        z.copy_(y)  # WRITE
        return z


class SafeTransposedViewOfMutatedBase(_Two):
    def forward(self, x):
        z = self.a(x)
        v = z.transpose(2, 3)
        z.relu_()
        return v


class SafeWriteThroughTranspose(_Two):
    def forward(self, x):
        z = self.a(x)
        z.transpose(2, 3)[:, :, :2].relu_()
        return z


class UnsafeReshapedViewOfMutatedBase(_Two):
    def forward(self, x):
        z = self.a(x)
        v = z[:, :2].flatten(2)
        z.relu_()  # WRITE
        return v


class UnsafeWriteThroughReshapedView(_Two):
    def forward(self, x):
        z = self.a(x)
        z[:, :2].flatten(2)[:, :, 3:20].relu_()  # WRITE
        return z


class UnsafeClamp(_Two):
    def forward(self, x):
        z = self.a(x)
        z.clamp_(-0.5, 0.5)  # WRITE
        return z


class UnsafeIndexPut(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        z.index_put_((torch.tensor([0]),), y[0])  # WRITE
        return z


class SafeOutIntoView(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        torch.add(y[:, :1], y[:, 1:2], out=z[:, :1])  # WRITE
        return z


class UnsafeDataAssign(_Two):
    def forward(self, x):
        z, y = self.a(x), self.b(x)
        z.data = y  # WRITE
        return z


class UnsafeInputRelu(_Two):
    def forward(self, x):
        x.relu_()  # WRITE
        return self.a(x)


class UnsafeInplaceReluOnInput(_Two):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.a(self.act(x))  # WRITE


class UnsafeParameterWrite(_Two):
    def forward(self, x):
        y = self.a(x)
        self.b.bias.add_(y[0, :, 0, 0])  # WRITE
        return self.b(x)


class UnsafeBufferWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.register_buffer("state", torch.zeros(1, 4, 6, 6))

    def forward(self, x):
        y = self.conv(x)
        self.state += y  # WRITE
        return self.state * y


class UnsafeNumpyWrite(_Two):
    def forward(self, x):
        z = self.a(x)
        z.numpy()[:, :2] = 0  # WRITE
        return z + self.b(x)


class UnsafeDlpackWrite(_Two):
    def forward(self, x):
        z = self.a(x)
        np.from_dlpack(z)[:, :2] = 0  # WRITE
        return torch.relu(z)


class UnsafeWriteWithoutTorchFunction(_Two):
    def forward(self, x):
        z = self.a(x)
        with torch._C.DisableTorchFunction():
            z[:, :2] = 0.0  # WRITE
        return torch.relu(z)


class UnsafeLastWriteWithoutTorchFunction(_Two):
    def forward(self, x):
        z = self.a(x)
        with torch._C.DisableTorchFunction():
            z.mul_(2.0)  # WRITE
        return z


class SafeReluInplace(_Two):
    def forward(self, x):
        x = self.a(x)
        x.relu_()
        return self.b(x)


class SafeModuleInplace(_Two):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.b(self.act(self.a(x))))


class SafeAccumulate(_Two):
    def forward(self, x):
        z = self.a(x)
        z += self.b(x)
        z *= self.b(x)
        z.sigmoid_()
        return F.relu(z, inplace=True)


class SafeOutIntoSelf(_Two):
    def forward(self, x):
        z = self.a(x)
        torch.add(z, self.b(x), out=z)
        return z


class SafeViewNotReadAgain(_Two):
    def forward(self, x):
        z = self.a(x)
        v = z[:, 1:3]
        v.relu_()
        return v


class SafeChunkInplace(_Two):
    def forward(self, x):
        p, q = self.a(x).chunk(2, dim=1)
        p.relu_()
        return torch.cat([q, p], dim=1)


class SafeUnsqueezeInplace(_Two):
    def forward(self, x):
        z = self.a(x)
        v = z.flatten(2)
        v.unsqueeze_(0)
        return v.squeeze(0) + z.flatten(2)
