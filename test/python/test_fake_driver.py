"""The runtime's GPU path, run against a fake NVIDIA driver.

``build/lib/fake-cuda/libcuda.so.1`` (unittests/Runtime/FakeCudaDriver.cpp)
implements the driver API calls of runtime/cuda/CudaModel.cpp on the host:
no kernel runs (the emulator proves what they compute, test_cuda.py), but
module load, function lookup, the launch-resource check, the arena and
weights, every launch with its block and arguments, CUDA graphs, events,
profiling and the driver's errors go through the code a GPU machine runs,
on every commit. Its clock advances 1 µs per launch, so timings are exact.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cuda_artifact import describe_step, program, to_json
from test_cuda import CUDA_RUN, PTXAS, compile_cuda, export

from gpuopt.tools import build_dir

FAKE = build_dir() / "lib" / "fake-cuda" / "libcuda.so.1"

pytestmark = pytest.mark.skipif(
    not FAKE.exists() or not CUDA_RUN.exists() or not PTXAS.exists(),
    reason="no CUDA toolkit at configure time: gpuopt-cuda-run and the fake driver are not built",
)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Rolling-UNet-S at 32x32, optimized: as PTX for sm_90 (the fake driver
    reads each kernel's parameters and `.maxntid` from it), as a fatbin for
    sm_90 (its PTX compressed: names only) and as PTX for sm_86."""
    out = tmp_path_factory.mktemp("fake")
    mlir, weights = export("rolling_unet_s", out, (1, 3, 32, 32))
    artifacts = {}
    for key, args in (
        ("artifact", ["--cuda-arch=sm_90", "--cuda-format=ptx"]),
        ("fatbin", ["--cuda-arch=sm_90"]),
        ("ptx86", ["--cuda-arch=sm_86", "--cuda-format=ptx"]),
    ):
        artifacts[key] = out / f"{key}.gpuopt"
        proc = compile_cuda(mlir, artifacts[key], *args, "--pipeline=gpuopt-optimize")
        assert proc.returncode == 0, proc.stderr
    doc = to_json(artifacts["artifact"])
    return {
        **artifacts,
        "weights": weights,
        "input": mlir.parent / "ref" / "input.npy",
        "doc": doc,
        "plan": program(doc),
        "dir": out,
    }


def on_fake_driver(
    command: list, tmp_path: Path, **env: str
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Runs `command` with the fake driver first in LD_LIBRARY_PATH and
    GPUOPT_FAKE_CUDA_<KEY> = value for each of `env`; returns the process
    and the driver's log lines."""
    log = tmp_path / "driver.log"
    log.unlink(missing_ok=True)
    environ = dict(
        os.environ,
        LD_LIBRARY_PATH=":".join(filter(None, [str(FAKE.parent), os.environ.get("LD_LIBRARY_PATH")])),
        GPUOPT_FAKE_CUDA_LOG=str(log),
        **{f"GPUOPT_FAKE_CUDA_{k}": v for k, v in env.items()},
    )
    proc = subprocess.run(command, capture_output=True, text=True, check=False, env=environ, timeout=300)
    return proc, log.read_text().splitlines() if log.exists() else []


def run(model: dict, tmp_path: Path, *args: str, artifact: Path | None = None, **env: str):
    """gpuopt-cuda-run on the fake driver."""
    command = [
        CUDA_RUN,
        artifact or model["artifact"],
        f"--weights={model['weights']}",
        f"--input=@{model['input']}",
        f"--output=@{tmp_path / 'y.npy'}",
        *args,
    ]
    return on_fake_driver(command, tmp_path, **env)


LAUNCH = re.compile(
    r"launch (\S+) grid (\d+),(\d+),(\d+) block (\d+),(\d+),(\d+) args (\d+)((?: a\d+\+\d+)*)( \(graph\))?$"
)


def check_launches(found: list[re.Match], steps: list[dict], plan: dict) -> None:
    """Each launch the driver ran is its step's: kernel, grid, block, and
    each argument the step's buffer (the arena, the only allocation, at the
    buffer's offset)."""
    assert len(found) == len(steps)
    for m, step in zip(found, steps, strict=True):
        kernel = plan["kernels"][step["kernel"]]
        assert m.group(1) == kernel["name"]
        assert tuple(map(int, m.group(2, 3, 4))) == tuple(step["grid"][d] for d in "xyz")
        assert tuple(map(int, m.group(5, 6, 7))) == tuple(step["block"][d] for d in "xyz")
        # The argument count is the PTX entry's: the plan passes exactly the
        # kernel's parameters.
        assert int(m.group(8)) == len(kernel["args"]) == len(step["args"])
        assert m.group(9).split() == [f"a0+{plan['buffers'][a]['offset']}" for a in step["args"]]


def launches(log: list[str]) -> list[re.Match]:
    return [m for line in log if (m := LAUNCH.match(line))]


def test_fake_driver_runs_forward_graph_timing_and_profile(model: dict, tmp_path: Path) -> None:
    plan = model["plan"]
    n = len(plan["run"])
    report = tmp_path / "r.json"
    proc, log = run(model, tmp_path, "--graph", "--warmup=1", "--runs=3", "--profile=2", f"--json={report}")
    assert proc.returncode == 0, proc.stderr
    # The clock advances 1 µs per launch: a forward of n launches, n µs.
    assert f"{n} launches per forward (CUDA graph), median {n / 1000:.4f} ms" in proc.stdout
    assert "on gpuopt fake driver (sm_90)" in proc.stdout
    r = json.loads(report.read_text())
    assert r["device"] == "gpuopt fake driver (sm_90)" and r["launches"] == n
    assert len(r["step_ms"]) == n and all(abs(t - 0.001) < 1e-9 for t in r["step_ms"])
    assert r["median_ms"] == pytest.approx(n / 1000) and r["kernel_ms_sum"] == pytest.approx(n / 1000)

    assert re.match(rf"load ptx \d+ bytes, {len(plan['kernels'])} PTX entries", log[0]), log[0]
    assert log.count(f"capture end: {n} launches") == 1
    seen = launches(log)
    # One captured forward for the output, 1 warm-up and 3 timed: 5 graph
    # replays; the load-time steps, then the profile's warm-up forward and
    # its 2 passes launch directly.
    check_launches([m for m in seen if m.group(10)], plan["run"] * 5, plan)
    check_launches([m for m in seen if not m.group(10)], plan["init"] + plan["run"] * 3, plan)
    # No kernel ran: the output is what the runtime copied back from the
    # arena, its NaN poison, in the model's shape.
    y = np.load(tmp_path / "y.npy")
    assert y.shape == np.load(model["dir"] / "ref" / "output.npy").shape
    assert np.isnan(y).all()


@pytest.mark.parametrize(
    ("key", "loaded"), [("fatbin", "fatbin"), ("ptx86", "ptx")], ids=["fatbin-sm90", "ptx-sm86-on-sm90"]
)
def test_fake_driver_loads_fatbin_and_older_ptx(model: dict, tmp_path: Path, key: str, loaded: str) -> None:
    """The default fatbin (its kernels found by name), and sm_86 PTX on an
    sm_90 device (the fallback selectCudaImage takes: the driver compiles
    it)."""
    proc, log = run(model, tmp_path, artifact=model[key])
    assert proc.returncode == 0, proc.stderr
    assert log[0].startswith(f"load {loaded} "), log[0]
    plan = program(to_json(model[key]))
    names = [plan["kernels"][s["kernel"]]["name"] for s in plan["init"] + plan["run"]]
    assert [m.group(1) for m in launches(log)] == names


# What the fake driver's cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS) says.
FAKE_REGISTERS = 32
FORMATS = {"Fatbin": "fatbin", "Cubin": "cubin", "Ptx": "ptx", "HostSo": "host-so"}


def step_text(model: dict, which: str, index: int) -> str:
    """How the runtime names a step (describe_step), as a pattern."""
    return re.escape(describe_step(model["doc"], which, index))


@pytest.mark.parametrize("case", ["no-image", "no-device", "no-memory", "block-too-large"])
def test_fake_driver_load_errors(model: dict, tmp_path: Path, case: str) -> None:
    """Each refused before any launch, with its message; nothing written."""
    plan = model["plan"]
    if case == "no-image":
        env, code = {"SM": "80"}, 1
        holds = ", ".join(f"{FORMATS[i['format']]} {i['chip']}" for i in plan["images"])
        message = re.escape(
            f"no kernel image for gpuopt fake driver (sm_80) (sm_80); the artifact holds {holds}: "
            "recompile with --cuda-arch=sm_80"
        )
    elif case == "no-device":
        env, code = {"DEVICES": "0"}, 2
        message = re.escape("no CUDA device 0 (the driver reports 0) (no usable GPU: nothing ran)")
    elif case == "no-memory":
        env, code = {"MEMORY": "4096"}, 1
        message = re.escape(
            f"cannot allocate its arena of {plan['arena_bytes']} bytes ({plan['arena_bytes'] >> 20} MiB) on "
            "gpuopt fake driver (sm_90): cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"
        )
    else:
        # The device allows one thread less than the plan's largest block:
        # the first step launching that block is named.
        sizes = [
            (w, i, s["block"]["x"] * s["block"]["y"] * s["block"]["z"])
            for w in ("init", "run")
            for i, s in enumerate(plan[w])
        ]
        most = max(t for _, _, t in sizes)
        which, index, _ = next(x for x in sizes if x[2] == most)
        env, code = {"MAX_THREADS": str(most - 1)}, 1
        message = (
            re.escape(f"{model['artifact']}: ")
            + step_text(model, which, index)
            + re.escape(
                f": launches {most} threads per block, but on this device the kernel allows at most {most - 1} "
                f"({FAKE_REGISTERS} registers per thread, or the block it was compiled for): compile the model "
                "again, with a "
                "smaller --cuda-block-size if its registers are the limit"
            )
        )
    proc, log = run(model, tmp_path, **env)
    assert proc.returncode == code, proc.stderr
    assert re.search(message, proc.stderr), proc.stderr
    assert not launches(log), "a launch ran after a load error"
    assert not (tmp_path / "y.npy").exists()


@pytest.mark.parametrize("graph", [False, True], ids=["direct", "graph"])
def test_fake_driver_launch_failure_and_fault_name_the_step(model: dict, tmp_path: Path, graph: bool) -> None:
    plan = model["plan"]
    init, n = len(plan["init"]), len(plan["run"])
    flags = ["--graph"] if graph else []
    # cuLaunchKernel refuses run[2] (while it is captured, with --graph):
    # the error names it.
    proc, _ = run(model, tmp_path, *flags, FAIL_LAUNCH=str(init + 2))
    assert proc.returncode == 1
    assert re.search(
        step_text(model, "run", 2) + r": cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        proc.stderr,
    ), proc.stderr
    # run[2] faults while it runs (in the graph's replay, with --graph):
    # the forward's synchronization reports it and says how to find the
    # step.
    proc, log = run(model, tmp_path, *flags, FAULT_LAUNCH=str(init + 2))
    assert proc.returncode == 1
    assert re.search(
        rf"cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS .* after a forward \({n} "
        r"launches\); gpuopt-cuda-run --sync-each-step",
        proc.stderr,
    ), proc.stderr
    assert len(launches(log)) == init + n
    if graph:
        return
    # --sync-each-step finds it and stops there.
    proc, log = run(model, tmp_path, "--sync-each-step", FAULT_LAUNCH=str(init + 2))
    assert proc.returncode == 1
    assert re.search(
        step_text(model, "run", 2) + r": the launch faulted \(cuStreamSynchronize failed: "
        r"CUDA_ERROR_ILLEGAL_ADDRESS",
        proc.stderr,
    ), proc.stderr
    assert len(launches(log)) == init + 3, "launches went on after the faulting one"
    # A launch of the profile's first pass refused (after the output's
    # forward and the profile's warm-up one): named too.
    proc, _ = run(model, tmp_path, "--profile=1", FAIL_LAUNCH=str(init + 2 * n + 2))
    assert proc.returncode == 1
    assert re.search(
        step_text(model, "run", 2) + r": cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        proc.stderr,
    ), proc.stderr


def ptx_blocks_and_registers(artifact: Path, tmp_path: Path) -> tuple[dict, dict[str, int], dict[str, int]]:
    """The plan, each kernel's `.maxntid` and its registers (ptxas -v)."""
    plan = program(to_json(artifact))
    ptx = bytes(next(i["data"] for i in plan["images"] if i["chip"] == "sm_90")).decode()
    pattern = r"\.entry (\w+)\([^)]*\)\s*\.maxntid (\d+), 1, 1"
    blocks = {name: int(x) for name, x in re.findall(pattern, ptx, flags=re.DOTALL)}
    (tmp_path / "k.ptx").write_text(ptx)
    out = subprocess.run(
        [PTXAS, "-arch=sm_90", "-v", "-o", "/dev/null", tmp_path / "k.ptx"],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    pattern = r"Compiling entry function '(\w+)'.*?Used (\d+) registers"
    regs = {name: int(r) for name, r in re.findall(pattern, out, flags=re.DOTALL)}
    return plan, blocks, regs


def test_kernels_declare_their_block_and_fit_it(model: dict, tmp_path: Path) -> None:
    """Every kernel's PTX entry carries `.maxntid` = the block every launch
    of it has, and ptxas's registers fit that block in sm_90's 65536 per
    block (allocated per warp in units of 256): the optimized model (256
    threads per block) and the exported one with 1024-thread blocks."""
    big = tmp_path / "big.gpuopt"
    proc = compile_cuda(
        model["dir"] / "m.mlir", big, "--cuda-arch=sm_90", "--cuda-format=ptx", "--cuda-block-size=1024"
    )
    assert proc.returncode == 0, proc.stderr
    for artifact in (model["artifact"], big):
        plan, blocks, regs = ptx_blocks_and_registers(artifact, tmp_path)
        assert len(blocks) == len(plan["kernels"]) == len(regs)
        for step in plan["init"] + plan["run"]:
            b = step["block"]
            assert (b["x"], b["y"], b["z"]) == (blocks[plan["kernels"][step["kernel"]]["name"]], 1, 1)
        for name, r in regs.items():
            per_warp = -(-r * 32 // 256) * 256
            assert per_warp * -(-blocks[name] // 32) <= 65536, (
                f"{name}: {r} registers x {blocks[name]} threads"
            )
    assert max(blocks.values()) == 1024


def test_fake_driver_through_the_model_abi(model: dict, tmp_path: Path) -> None:
    """gpuopt-run and CompiledModel (libgpuopt_runtime.so) load the artifact
    on device 0 and run a forward through the same CudaModel."""
    n = len(model["plan"]["init"]) + len(model["plan"]["run"])
    gpuopt_run = build_dir() / "bin" / "gpuopt-run"
    if gpuopt_run.exists():
        y = tmp_path / "y.npy"
        args = [f"--weights={model['weights']}", f"--input=@{model['input']}", f"--output=@{y}", "--device=0"]
        proc, log = on_fake_driver([gpuopt_run, model["artifact"], *args], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert np.isnan(np.load(y)).all()
        assert len(launches(log)) == n
    code = (
        "import sys, numpy as np\n"
        "from gpuopt.compiled import CompiledModel\n"
        "m = CompiledModel(sys.argv[1], sys.argv[2], device=0)\n"
        "(y,) = m.run(np.load(sys.argv[3]))\n"
        "print(y.shape)\n"
    )
    command = [sys.executable, "-c", code, model["artifact"], model["weights"], model["input"]]
    proc, log = on_fake_driver(command, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(np.load(model["dir"] / "ref" / "output.npy").shape)
    assert len(launches(log)) == n
