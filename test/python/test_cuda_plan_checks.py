"""The CUDA runtime's static checks of a launch plan (issue 16, items 4, 6).

Every reader of a CUDA artifact (the GPU runtime before any driver call,
the emulator, ``--inspect``, the model API) checks the plan's data flow
(CudaModel.h, checkCudaPlan): what each launch reads was written before
through the same buffer, a written argument overlaps no other argument of
its launch, params, inputs and constants are never overwritten, and the
outputs hold what the forward wrote. The hostile plans here are edits of a
real compiled artifact (cuda_artifact.py: the FlatBuffer as JSON); each is
refused with one message naming the plan, the step, its kernel and its
source locations (the PyTorch file:line:col the exporter recorded), exit 1,
on the emulator, the GPU path of gpuopt-cuda-run (which would otherwise end
in "no usable GPU" on a machine without a driver: the check comes first) and
CompiledModel. The expected messages are built from the edited plan, so each
case states which step and which bytes the check must blame.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from cuda_artifact import describe_step, from_json, location_text, program, to_json

from gpuopt.compiled import CompiledModel, CompiledModelError
from gpuopt.tools import build_dir

COMPILE = build_dir() / "bin" / "gpuopt-compile"
CUDA_RUN = build_dir() / "bin" / "gpuopt-cuda-run"

pytestmark = pytest.mark.skipif(
    not CUDA_RUN.exists(), reason="gpuopt-cuda-run not built (no CUDA toolkit at configure time)"
)

# A source location of the exporter: an absolute path to a model's .py file.
SOURCE = re.compile(r"/\S+\.py:\d+:\d+")


def export_zoo(name: str, out: Path) -> dict[str, Path]:
    out.mkdir()
    mlir, weights, ref = out / "m.mlir", out / "m.safetensors", out / "ref"
    subprocess.run(
        [sys.executable, "-m", "gpuopt.export", f"zoo:{name}", "-o", mlir, "--weights", weights]
        + ["--input-shape", "1,3,32,32", "--reference-dir", ref, "-q"],
        check=True,
        capture_output=True,
    )
    return {"mlir": mlir, "weights": weights, "input": ref / "input.npy"}


def compile_cuda(mlir: Path, out: Path, optimized: bool) -> Path:
    extra = ["--pipeline=gpuopt-optimize"] if optimized else []
    proc = subprocess.run(
        [COMPILE, mlir, "--target=cuda", "--cuda-arch=sm_90", "--cuda-format=ptx", "-o", out, *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, bool], dict[str, Path]]:
    """A zoo model at 1x3x32x32 compiled for sm_90 (PTX and the host image),
    as exported or optimized; once per module."""
    out = tmp_path_factory.mktemp("zoo")
    exports: dict[str, dict[str, Path]] = {}
    artifacts: dict[tuple[str, bool], dict[str, Path]] = {}

    def get(name: str, optimized: bool) -> dict[str, Path]:
        if name not in exports:
            exports[name] = export_zoo(name, out / name)
        if (name, optimized) not in artifacts:
            e = exports[name]
            path = out / name / f"{'optimized' if optimized else 'exported'}.gpuopt"
            artifacts[(name, optimized)] = dict(e, artifact=compile_cuda(e["mlir"], path, optimized))
        return artifacts[(name, optimized)]

    return get


def tool(
    artifact: Path, model: dict[str, Path], *args: str, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CUDA_RUN, artifact, f"--weights={model['weights']}", f"--input=@{model['input']}", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def expect_refused(bad: Path, model: dict[str, Path], message: str) -> None:
    """`bad` is refused with `path: invalid CUDA artifact: message`, exit 1,
    by every reader, before any driver call."""
    full = f"{bad}: invalid CUDA artifact: {message}"
    for mode in (
        ["--emulate"],
        ["--emulate=shuffled:3", "--sync-each-step"],
        [],
        ["--sync-each-step"],
        ["--inspect"],
    ):
        if mode == ["--inspect"]:
            proc = subprocess.run([CUDA_RUN, bad, "--inspect"], capture_output=True, text=True, check=False)
        else:
            proc = tool(bad, model, *mode)
        assert proc.returncode == 1, (mode, proc.stderr)
        assert proc.stderr == f"gpuopt-cuda-run: error: {full}\n", (mode, proc.stderr)
    for device in ("emulate", 0):
        with pytest.raises(CompiledModelError) as e:
            CompiledModel(bad, model["weights"], device=device)
        assert str(e.value) == full, device


def access(prog: dict, step: dict, what: str) -> list[int]:
    """The buffers `step` passes to kernel arguments that read (or write)."""
    args = prog["kernels"][step["kernel"]]["args"]
    return [b for b, a in zip(step["args"], args, strict=True) if a[what]]


def first_uses(prog: dict) -> dict[int, int]:
    """Buffer -> index of the first run step passing it."""
    first: dict[int, int] = {}
    for i, step in enumerate(prog["run"]):
        for b in step["args"]:
            first.setdefault(b, i)
    return first


def kernel_name(prog: dict, index: int) -> str:
    return prog["kernels"][prog["run"][index]["kernel"]]["name"]


def used_by(prog: dict, buffer: int) -> str:
    """The suffix of a message about a buffer: its first launch."""
    i = first_uses(prog)[buffer]
    step = prog["run"][i]
    assert not prog["init"], "a plan without load-time steps: the first use is in run"
    return (
        f" (argument {step['args'].index(buffer)} of run[{i}], kernel '{kernel_name(prog, i)}' "
        f"{location_text(step['sources'], step['loc'])})"
    )


# Each hostile plan: an edit of the exported UNeXt's plan that returns the
# message the reader must give for the edited plan.


def missing_kernel(m: dict) -> str:
    prog = program(m)
    n = len(prog["kernels"])
    step = prog["run"][5]
    step["kernel"] = n
    return f"run[5] (kernel {n} {location_text(step['sources'], step['loc'])}): 'kernel' must index 'kernels' ({n} kernels)"


def wrong_argument_count(m: dict) -> str:
    prog = program(m)
    i = next(i for i, s in enumerate(prog["run"]) if len(s["args"]) >= 3)
    n = len(prog["run"][i]["args"])
    prog["run"][i]["args"].pop()
    return f"{describe_step(m, 'run', i)}: {n - 1} arguments, the kernel takes {n}"


def first_temp(prog: dict) -> int:
    """A temporary some launch writes: the first written by run[1] or later."""
    return next(
        b for s in prog["run"][1:] for b in access(prog, s, "writes") if prog["buffers"][b]["kind"] == "Temp"
    )


def offset_past_arena(m: dict) -> str:
    prog = program(m)
    x = first_temp(prog)
    arena = prog["arena_bytes"]
    assert arena % 256 == 0
    buf = prog["buffers"][x]
    buf["offset"] = arena
    return f"buffers[{x}]: {buf['bytes']} bytes at offset {arena} lie outside the arena of {arena} bytes{used_by(prog, x)}"


def negative_size(m: dict) -> str:
    prog = program(m)
    x = first_temp(prog)
    prog["buffers"][x]["type"]["shape"][0] = -1
    return f"buffers[{x}] has a negative dimension{used_by(prog, x)}"


def huge_size(m: dict) -> str:
    prog = program(m)
    x = first_temp(prog)
    prog["buffers"][x]["type"]["shape"] = [2**31, 2**31, 4]
    return f"buffers[{x}] [2147483648, 2147483648, 4]: its byte size overflows int64{used_by(prog, x)}"


def overlaps(a: dict, b: dict) -> bool:
    return a["offset"] < b["offset"] + b["bytes"] and b["offset"] < a["offset"] + a["bytes"]


def read_before_write(m: dict) -> str:
    """Two launches swapped: a consumer runs before its producer. The first
    such pair whose product no earlier launch wrote (nor its bytes, through
    another buffer): those bytes then hold nothing at all."""
    prog = program(m)
    run, buffers = prog["run"], prog["buffers"]
    for i in range(len(run) - 1):
        earlier = {b for s in run[:i] for b in access(prog, s, "writes")}
        produced = set(access(prog, run[i], "writes")) - earlier
        args = prog["kernels"][run[i + 1]["kernel"]]["args"]
        reads = [a for a, b in enumerate(run[i + 1]["args"]) if args[a]["reads"] and b in produced]
        if not reads:
            continue
        a = reads[0]
        t = run[i + 1]["args"][a]
        if buffers[t]["kind"] != "Temp" or any(overlaps(buffers[t], buffers[e]) for e in earlier):
            continue
        run[i], run[i + 1] = run[i + 1], run[i]
        buf = buffers[t]
        return (
            f"{describe_step(m, 'run', i)}: argument {a} reads buffers[{t}] (temp) before it is written: "
            f"arena bytes [{buf['offset']}, {buf['offset'] + buf['bytes']}) hold nothing written before"
        )
    raise AssertionError("no launch reads what the launch before it wrote")


def output_aliases_input(m: dict) -> str:
    """A liveness bug: a launch's fresh result placed on the input it reads
    for the last time (released one step too early)."""
    prog = program(m)
    buffers, run = prog["buffers"], prog["run"]
    first = first_uses(prog)
    last = {b: i for i, s in enumerate(run) for b in s["args"]}
    for j, step in enumerate(run):
        temps = [b for b in step["args"] if buffers[b]["kind"] == "Temp"]
        fresh = [b for b in access(prog, step, "writes") if b in temps and first[b] == j]
        written = access(prog, step, "writes")
        dying = [
            b
            for b in access(prog, step, "reads")
            if b in temps and last[b] == j and first[b] < j and b not in written
        ]
        pairs = [(w, r) for w in fresh for r in dying if buffers[w]["bytes"] <= buffers[r]["bytes"]]
        if pairs:
            w, r = pairs[0]
            buffers[w]["offset"] = buffers[r]["offset"]
            begin, end = buffers[r]["offset"], buffers[r]["offset"] + buffers[w]["bytes"]
            return (
                f"{describe_step(m, 'run', j)}: argument {step['args'].index(w)} writes buffers[{w}] (temp), "
                f"which overlaps argument {step['args'].index(r)}, buffers[{r}] (temp), at arena bytes "
                f"[{begin}, {end})"
            )
    raise AssertionError("no launch writes a fresh temporary while reading one for the last time")


def new_buffer(prog: dict, like: int, kind: str) -> int:
    """A copy of buffers[like] of `kind` in fresh arena space."""
    buf = dict(prog["buffers"][like], kind=kind, offset=prog["arena_bytes"])
    prog["arena_bytes"] += (buf["bytes"] + 255) // 256 * 256
    prog["buffers"].append(buf)
    return len(prog["buffers"]) - 1


def param_written(m: dict) -> str:
    """A launch of the forward writes a weight (the model's params list it,
    so it is bound like any other)."""
    prog = program(m)
    j = next(j for j, s in enumerate(prog["run"]) if access(prog, s, "writes") and j > 2)
    step = prog["run"][j]
    w = next(a for a, arg in enumerate(prog["kernels"][step["kernel"]]["args"]) if arg["writes"])
    p = new_buffer(prog, step["args"][w], "Param")
    prog["buffers"][p]["name"] = "hostile.weight"
    m["params"].append({"name": "hostile.weight", "type": prog["buffers"][p]["type"]})
    step["args"][w] = p
    return (
        f"{describe_step(m, 'run', j)}: argument {w} writes buffers[{p}] (param 'hostile.weight'): "
        "parameters are read-only (the weights file writes them at load)"
    )


def constant_written(m: dict) -> str:
    """A temporary relabelled constant: the forward would change what every
    later forward reads."""
    prog = program(m)
    first = first_uses(prog)
    j, b = next(
        (j, b)
        for j, s in enumerate(prog["run"])
        for b in access(prog, s, "writes")
        if prog["buffers"][b]["kind"] == "Temp" and first[b] == j and b not in access(prog, s, "reads")
    )
    prog["buffers"][b]["kind"] = "Constant"
    a = prog["run"][j]["args"].index(b)
    return (
        f"{describe_step(m, 'run', j)}: argument {a} writes buffers[{b}] (constant): constants are written "
        "at load (init) only, every forward reads them"
    )


def dead_buffer_read(m: dict) -> str:
    """A liveness bug: a temporary placed over one that is still to be read."""
    prog = program(m)
    buffers, run = prog["buffers"], prog["run"]
    first = first_uses(prog)
    temps = {b for b, buf in enumerate(buffers) if buf["kind"] == "Temp"}
    for j, step in enumerate(run):
        for y in access(prog, step, "writes"):
            if y not in temps or first[y] != j or y in access(prog, step, "reads"):
                continue
            for x in sorted(temps - {y}):
                if buffers[x]["bytes"] < buffers[y]["bytes"] or first.get(x, j) >= j or x in step["args"]:
                    continue
                later = [k for k in range(j + 1, len(run)) if x in run[k]["args"]]
                if not later or x not in access(prog, run[later[0]], "reads") or y in run[later[0]]["args"]:
                    continue
                k = later[0]
                buffers[y]["offset"] = buffers[x]["offset"]
                by = max(i for i in range(j, k) if y in access(prog, run[i], "writes"))
                a = next(
                    a
                    for a, b in enumerate(run[k]["args"])
                    if b == x and prog["kernels"][run[k]["kernel"]]["args"][a]["reads"]
                )
                begin = buffers[x]["offset"]
                return (
                    f"{describe_step(m, 'run', k)}: argument {a} reads buffers[{x}] (temp), but its bytes were "
                    f"reused: arena bytes [{begin}, {begin + buffers[y]['bytes']}) were last written through "
                    f"buffers[{y}] (temp) by {describe_step(m, 'run', by)}"
                )
    raise AssertionError("no temporary is written while another is live")


def output_not_written(m: dict) -> str:
    """The last launch, the only one writing the output, dropped."""
    prog = program(m)
    out = prog["outputs"][0]
    writers = [i for i, s in enumerate(prog["run"]) if out in access(prog, s, "writes")]
    assert writers == [len(prog["run"]) - 1], writers
    prog["run"].pop()
    buf = prog["buffers"][out]
    return (
        f"run: buffers[{out}] (output 0) does not hold what the forward wrote through it at its end: "
        f"arena bytes [{buf['offset']}, {buf['offset'] + buf['bytes']}) hold nothing written before"
    )


def access_not_recorded(m: dict) -> str:
    """A kernel argument as an earlier gpuopt-compile wrote it."""
    kernel = program(m)["kernels"][0]
    del kernel["args"][0]["reads"], kernel["args"][0]["writes"]
    return (
        f"kernels[0] ('{kernel['name']}'): argument 0 does not record whether the kernel reads and "
        "writes it (an artifact of an earlier gpuopt-compile): recompile it"
    )


def in_place_without_write(m: dict) -> str:
    prog = program(m)
    k, a = next(
        (k, a)
        for k, kernel in enumerate(prog["kernels"])
        for a, arg in enumerate(kernel["args"])
        if arg["reads"] and not arg["writes"]
    )
    prog["kernels"][k]["args"][a]["in_place"] = True
    name = prog["kernels"][k]["name"]
    return f"kernels[{k}] ('{name}'): argument {a} is in place, but the kernel reads but does not write it"


HOSTILE = [
    missing_kernel,
    wrong_argument_count,
    offset_past_arena,
    negative_size,
    huge_size,
    read_before_write,
    output_aliases_input,
    param_written,
    constant_written,
    dead_buffer_read,
    output_not_written,
    access_not_recorded,
    in_place_without_write,
]
# Messages about a step: they name its kernel and a source file:line:col.
LOCATED = {"wrong_argument_count", "read_before_write", "output_aliases_input", "param_written"}
LOCATED |= {"constant_written", "dead_buffer_read", "missing_kernel", "offset_past_arena"}
LOCATED |= {"negative_size", "huge_size"}


@pytest.mark.parametrize("edit", HOSTILE, ids=[f.__name__ for f in HOSTILE])
def test_hostile_plan_is_refused(edit: Callable[[dict], str], zoo, tmp_path: Path) -> None:
    model = zoo("unext", False)
    m = to_json(model["artifact"])
    message = edit(m)
    if edit.__name__ in LOCATED:
        assert re.search(r"(run|init)\[\d+\]", message) and "kernel " in message, message
        assert SOURCE.search(message) and "unext.py:" in message, message
    bad = from_json(m, tmp_path / f"{edit.__name__}.gpuopt")
    expect_refused(bad, model, message)


def test_dead_buffer_read_runs_unchecked(zoo, tmp_path: Path) -> None:
    """--skip-plan-checks (emulation only) runs the refused plan; its output
    then differs from the good plan's (the clobbered buffer is read). The GPU
    path has no such option."""
    model = zoo("unext", False)
    m = to_json(model["artifact"])
    dead_buffer_read(m)
    bad = from_json(m, tmp_path / "dead.gpuopt")
    good_y, bad_y = tmp_path / "good.npy", tmp_path / "bad.npy"
    proc = tool(model["artifact"], model, "--emulate", f"--output=@{good_y}")
    assert proc.returncode == 0, proc.stderr
    proc = tool(bad, model, "--emulate", "--skip-plan-checks", f"--output=@{bad_y}")
    assert proc.returncode == 0, proc.stderr
    assert not np.array_equal(np.load(good_y), np.load(bad_y))
    proc = tool(bad, model, "--skip-plan-checks")
    assert proc.returncode == 1
    assert proc.stderr == (
        "gpuopt-cuda-run: error: --skip-plan-checks applies to --emulate only (a GPU never runs a plan "
        "the checks refuse)\n"
    )


def test_emulator_block_limit_names_the_step(zoo, tmp_path: Path) -> None:
    """A grid the GPU could launch but the emulator would not finish: its
    step, kernel and sources are named."""
    model = zoo("unext", False)
    m = to_json(model["artifact"])
    program(m)["run"][7]["grid"] = {"x": 2**13, "y": 2**12, "z": 1}
    bad = from_json(m, tmp_path / "grid.gpuopt")
    proc = tool(bad, model, "--emulate")
    assert proc.returncode == 1
    assert proc.stderr == (
        f"gpuopt-cuda-run: error: {bad}: {describe_step(m, 'run', 7)} launches more than 2^24 blocks, "
        "more than the emulator runs\n"
    )


@pytest.mark.parametrize("optimized", [False, True], ids=["exported", "optimized"])
@pytest.mark.parametrize("name", ["unet", "unext"])
def test_zoo_plans_pass(name: str, optimized: bool, zoo) -> None:
    """Real plans pass the checks; what they record is consistent: every
    kernel argument is read or written (in place exactly when both), every
    launch writes something, and every step names the model's source lines,
    distinct for launches of one merged kernel."""
    model = zoo(name, optimized)
    proc = subprocess.run(
        [CUDA_RUN, model["artifact"], "--inspect"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    m = to_json(model["artifact"])
    prog = program(m)
    assert bool(prog["init"]) == optimized
    for kernel in prog["kernels"]:
        for arg in kernel["args"]:
            assert arg["reads"] or arg["writes"], kernel["name"]
            assert arg["in_place"] == (arg["reads"] and arg["writes"]), kernel["name"]
    sources: dict[int, set[tuple[str, ...]]] = {}
    for plan in ("init", "run"):
        for step in prog[plan]:
            assert access(prog, step, "writes"), step
            assert step["sources"] and step["sources"][0] == step["loc"]
            assert all(re.fullmatch(r"/\S+:\d+:\d+", s) for s in step["sources"]), step["sources"]
            # The PyTorch source; an op a pass made may carry the graph's
            # own location (the .mlir file's func.func line) besides.
            assert any(SOURCE.fullmatch(s) and f"models/{name}.py:" in s for s in step["sources"]), step
            sources.setdefault(step["kernel"], set()).add(tuple(step["sources"]))
    # Fused ops show as several sources of one launch; a kernel launched for
    # several layers (merged by --deduplicate-gpu-kernels) names each one's.
    # The exported UNet at 32² launches no kernel twice (31 launches of 31
    # kernels since the convolutions read their padding in the load, and no
    # two of its layers have one shape), so there the second check has nothing
    # to look at; every other plan here merges some.
    assert any(len(s["sources"]) > 1 for s in prog["run"])
    launches = collections.Counter(step["kernel"] for plan in ("init", "run") for step in prog[plan])
    repeated = [k for k, n in launches.items() if n > 1]
    assert repeated or (name, optimized) == ("unet", False), "no kernel is launched twice"
    assert not repeated or any(len(sources[k]) > 1 for k in repeated)
    # The output and every input of the forward by themselves (a sanity
    # check of what the checks rely on): the output's last writer is a step.
    assert any(prog["outputs"][0] in access(prog, s, "writes") for s in prog["run"])


def test_sync_each_step(zoo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--sync-each-step: accepted by the emulator (a no-op there: it runs one
    launch at a time) and the GPU path; refused with --graph and for
    --inspect; GPUOPT_CUDA_SYNC_EACH_STEP takes 0 or 1."""
    model = zoo("unext", True)
    artifact = model["artifact"]
    ys = []
    for args in ([], ["--sync-each-step"]):
        y = tmp_path / f"y{len(ys)}.npy"
        proc = tool(artifact, model, "--emulate", f"--output=@{y}", *args)
        assert proc.returncode == 0, proc.stderr
        ys.append(np.load(y).view(np.uint32))
    assert np.array_equal(ys[0], ys[1])
    proc = tool(artifact, model, "--sync-each-step", "--graph")
    assert proc.returncode == 1
    assert proc.stderr == (
        "gpuopt-cuda-run: error: --sync-each-step and --graph are exclusive (a CUDA graph replays the "
        "forward without waiting between launches)\n"
    )
    proc = subprocess.run(
        [CUDA_RUN, artifact, "--inspect", "--sync-each-step"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr == (
        "gpuopt-cuda-run: error: --sync-each-step and --skip-plan-checks run a model; they do not apply "
        "to --inspect/--dump\n"
    )
    env = {**os.environ, "GPUOPT_CUDA_SYNC_EACH_STEP": "yes"}
    proc = tool(artifact, model, env=env)
    assert proc.returncode == 1
    assert proc.stderr == "gpuopt-cuda-run: error: GPUOPT_CUDA_SYNC_EACH_STEP must be 0 or 1, got 'yes'\n"
    monkeypatch.setenv("GPUOPT_CUDA_SYNC_EACH_STEP", "2")
    with pytest.raises(CompiledModelError) as e:
        CompiledModel(artifact, model["weights"], device=0)
    assert str(e.value) == f"{artifact}: GPUOPT_CUDA_SYNC_EACH_STEP must be 0 or 1, got '2'"
    # The emulator ignores it (nothing to synchronise).
    with CompiledModel(artifact, model["weights"], device="emulate") as compiled:
        got = compiled.run(np.load(model["input"]))[0]
    assert np.array_equal(got.view(np.uint32), ys[0])
    if not (Path("/dev/nvidiactl").exists()):
        # With a valid value the GPU path gets as far as the driver.
        for value in ("1", "0"):
            env["GPUOPT_CUDA_SYNC_EACH_STEP"] = value
            proc = tool(artifact, model, "--sync-each-step", env=env)
            assert proc.returncode == 2, proc.stderr
            assert "no usable GPU" in proc.stderr
