"""Convert a PyTorch checkpoint (``torch.save``'d state_dict) to safetensors.

::

    python -m gpuopt.weights convert IN.pth OUT.safetensors

The C++ tools (gpuopt-run, gpuopt-cuda-run, compiled model libraries) read
safetensors only and name this command when given a ``.pth``/``.pt`` file.
The checkpoint is loaded with ``torch.load(weights_only=True)``, so it cannot
run code. Entries that are not tensors (Pytorch-UNet keeps ``mask_values``, a
list, beside the weights) are dropped with a note per key; the tensors are
written under their state_dict names, contiguous and on the CPU.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from ._atomic import OutputPathError, atomic_output, check_outputs


class CheckpointError(ValueError):
    """The file is not a checkpoint holding a state_dict."""


def load_state_dict(path: str | Path, note: Callable[[str], None] | None = None) -> dict:
    """The tensors of the state_dict in ``path`` (a ``torch.save`` file), by name.

    Non-tensor entries are dropped, each reported through ``note``.
    """
    import pickle

    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path}: is a directory") from None
    except Exception as e:  # noqa: BLE001 - torch.load raises many kinds on a damaged file
        if isinstance(e, OSError) and not isinstance(e, pickle.UnpicklingError):
            raise CheckpointError(f"{path}: cannot read: {e.strerror or e}") from None
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"{path}: not a loadable PyTorch checkpoint ({first})") from None
    if not isinstance(obj, Mapping):
        raise CheckpointError(f"{path}: holds a {type(obj).__name__}, not a state_dict (a dict of tensors)")
    tensors = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise CheckpointError(f"{path}: key {key!r} is not a string; not a state_dict")
        if isinstance(value, torch.Tensor):
            # A fresh contiguous copy: safetensors refuses tensors sharing storage.
            tensors[key] = value.detach().to("cpu").contiguous().clone()
        elif note is not None:
            note(f"{path}: dropping '{key}' (a {type(value).__name__}, not a tensor)")
    if not tensors:
        raise CheckpointError(f"{path}: holds no tensors")
    return tensors


def convert(src: str | Path, dst: str | Path, note: Callable[[str], None] | None = None) -> int:
    """Writes the tensors of checkpoint ``src`` to ``dst`` (safetensors); returns how many."""
    from safetensors.torch import save_file

    check_outputs({"OUT": dst}, {"IN": src})
    tensors = load_state_dict(src, note)
    with atomic_output(dst) as tmp:
        save_file(tensors, str(tmp))
    return len(tensors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuopt.weights", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    conv = sub.add_parser("convert", help="write a torch.save'd state_dict as safetensors")
    conv.add_argument("input", metavar="IN", help="the .pth/.pt checkpoint")
    conv.add_argument("output", metavar="OUT", help="the safetensors file to write")
    args = parser.parse_args(argv)

    def note(msg: str) -> None:
        print(f"gpuopt.weights: note: {msg}", file=sys.stderr)

    try:
        n = convert(args.input, args.output, note)
    except (CheckpointError, OutputPathError, OSError) as e:
        print(f"gpuopt.weights: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({n} tensors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
