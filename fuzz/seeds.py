"""Write the seed corpora of gpuopt's fuzz targets (docs/Reliability.md).

    .venv/bin/python fuzz/seeds.py OUT_DIR [--no-zoo]

OUT_DIR/seg/         every test/**/*.mlir case (split at `// -----`, comment
                     lines dropped) and exported zoo graphs at 32x32
OUT_DIR/safetensors/ files written by the safetensors package: every dtype,
                     scalars, empty tensors, metadata, a zoo state_dict's names
OUT_DIR/npy/         files written by numpy: float32 arrays of every rank, the
                     dtypes and layouts gpuopt rejects, format versions 1-3
OUT_DIR/model-metadata/, OUT_DIR/cuda-artifact/
                     copies of fuzz/seeds-model-metadata/ and
                     fuzz/seeds-cuda-artifact/: the metadata (artifact
                     FlatBuffers: the gpuopt_model section of a library after
                     its 32-byte note, `llvm-objcopy --dump-section
                     gpuopt_model=S m.so && tail -c +33 S`; those of
                     before Model.checksum went through
                     cuda_artifact.from_json, which stamps it) and whole CUDA
                     artifacts (checked in: making them needs gpuopt-compile
                     and ptxas; all with --cuda-host-image=false):
                     test/Target/Cuda/gpuopt-compile-cuda.mlir
                     (--pipeline=gpuopt-optimize, fatbins for sm_90 and
                     sm_86) as compiled, and UNet (cubin sm_90) and UNeXt
                     (optimized, PTX sm_86) at 1x3x32x32 with each image cut
                     to its first 64 bytes (cuda_artifact.rewrite of
                     test/python, which stamps the checksum the CUDA
                     reader requires). They must pass the reader's plan checks:
                     remake them when the schema gains a field the reader
                     requires (the kernels' reads/writes did)

The zoo exports are kept when they exist already (they take seconds each).
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import save, save_file

REPO = Path(__file__).resolve().parents[1]
# Small graphs whose passes all have something to do: UNeXt's token MLPs
# (shifts, token layout) and UNeXt-Stripe's rolls.
ZOO = ("unext", "unext_stripe")
SPLIT = re.compile(r"^// -----\s*$", re.MULTILINE)


def seg_seeds(out: Path, zoo: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in sorted((REPO / "test").rglob("*.mlir")):
        stem = "-".join(path.relative_to(REPO / "test").with_suffix("").parts)
        for i, case in enumerate(SPLIT.split(path.read_text())):
            lines = [line for line in case.splitlines() if not line.lstrip().startswith("//")]
            text = "\n".join(lines).strip()
            if text:
                (out / f"{stem}-{i}.mlir").write_text(text + "\n")
                count += 1
    if zoo:
        for name in ZOO:
            graph = out / f"zoo-{name}.mlir"
            if graph.exists():
                count += 1
                continue
            weights = out.parent / f"zoo-{name}.safetensors"
            subprocess.run(
                [sys.executable, "-m", "gpuopt.export", f"zoo:{name}", "-o", str(graph)]
                + ["--weights", str(weights), "--input-shape", "1,3,32,32", "-q"],
                check=True,
            )
            count += 1
    return count


def safetensors_seeds(out: Path, zoo_dir: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    cases: dict[str, dict[str, np.ndarray]] = {
        "empty": {},
        "one-f32": {"conv.weight": rng.standard_normal((2, 3, 1, 1)).astype(np.float32)},
        "scalar": {"s": np.array(1.5, dtype=np.float32)},
        "zero-size": {"z": np.zeros((0, 4), dtype=np.float32), "a": np.ones(2, dtype=np.float32)},
        "dtypes": {
            f"t.{np.dtype(dt).name}": np.arange(3).astype(dt)
            for dt in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64)
        }
        | {"t.uint8": np.arange(3, dtype=np.uint8), "t.bool": np.array([True, False])},
        "bn": {
            "bn.weight": np.ones(4, dtype=np.float32),
            "bn.bias": np.zeros(4, dtype=np.float32),
            "bn.running_mean": np.zeros(4, dtype=np.float32),
            "bn.running_var": np.ones(4, dtype=np.float32),
            "bn.num_batches_tracked": np.array(0, dtype=np.int64),
        },
        "unicode": {"é.😀": np.ones(1, dtype=np.float32)},
    }
    for name, tensors in cases.items():
        save_file(tensors, str(out / f"{name}.safetensors"))
    (out / "metadata.safetensors").write_bytes(
        save({"w": np.ones(2, dtype=np.float32)}, metadata={"format": "pt", "note": "seed"})
    )
    count = len(cases) + 1
    # A real state_dict's names and dtypes, with one element per tensor so
    # that the seed stays small.
    for path in sorted(zoo_dir.glob("zoo-*.safetensors")):
        from safetensors.numpy import load_file

        small = {k: np.ascontiguousarray(v.reshape(-1)[:1]) for k, v in load_file(str(path)).items()}
        save_file(small, str(out / path.name))
        count += 1
    return count


def npy_seeds(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    arrays = {
        "scalar": np.array(2.0, dtype=np.float32),
        "vector": rng.standard_normal(5).astype(np.float32),
        "nchw": rng.standard_normal((1, 3, 4, 4)).astype(np.float32),
        "empty": np.zeros((2, 0, 3), dtype=np.float32),
        "f64": np.ones((2, 2)),
        "i64": np.arange(4),
        "big-endian": np.ones(3, dtype=">f4"),
        "fortran": np.asfortranarray(np.ones((2, 3), dtype=np.float32)),
        "structured": np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]),
    }
    for name, array in arrays.items():
        np.save(out / f"{name}.npy", array)
    count = len(arrays)
    for version in ((2, 0), (3, 0)):
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.ones((2, 3), dtype=np.float32), version=version)
        (out / f"v{version[0]}.npy").write_bytes(buffer.getvalue())
        count += 1
    return count


def artifact_seeds(out: Path, name: str) -> int:
    """Copies the checked-in seeds of fuzz/seeds-NAME/ to OUT/NAME/."""
    out.mkdir(parents=True, exist_ok=True)
    sources = sorted(p for p in (REPO / "fuzz" / f"seeds-{name}").iterdir() if p.is_file())
    for path in sources:
        shutil.copyfile(path, out / path.name)
    return len(sources)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--no-zoo", action="store_true", help="skip the zoo exports")
    args = parser.parse_args()
    n_seg = seg_seeds(args.out / "seg", zoo=not args.no_zoo)
    n_st = safetensors_seeds(args.out / "safetensors", args.out)
    n_npy = npy_seeds(args.out / "npy")
    n_md = artifact_seeds(args.out / "model-metadata", "model-metadata")
    n_cuda = artifact_seeds(args.out / "cuda-artifact", "cuda-artifact")
    print(
        f"seeds: {n_seg} seg, {n_st} safetensors, {n_npy} npy, {n_md} model-metadata, "
        f"{n_cuda} cuda-artifact in {args.out}"
    )


if __name__ == "__main__":
    main()
