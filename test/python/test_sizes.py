"""Sizes, allocation failure and call cycles (issue 12, items 1 and 6).

- A tensor over the per-tensor limit (2^40 bytes; 2^62 f32 wrapped to a
  64-byte buffer before) is refused by every compile path with a located
  error naming the type.
- A CUDA arena over the limit is refused by gpuopt-compile --target=cuda.
- A 4 TiB intermediate is a located error for gpuopt-compile (cpu, cuda) and
  `gpuopt-run --backend=cpu` (they accepted it and aborted on OOM).
- A 64 GiB intermediate (within the limit) that cannot be allocated under an
  address-space limit is a clean error of the compiled library (gpuopt-run
  and gpuopt.compiled) and of the JIT, and the library still runs a model
  that fits afterwards; before, the allocator aborted. So is a kernel's
  scratch buffer that cannot be allocated.
- Recursion and call cycles are refused by every tool within seconds (they
  crashed with SIGSEGV or spun in bufferization for minutes).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from gpuopt.tools import tool

# Generous bounds for the subprocesses: a refused input takes well under a
# second; these only keep a relapse (a spin in bufferization) from hanging.
TIMEOUT_S = 120
# The address-space limit under which the 64 GiB intermediate must fail to
# allocate (and everything else still fits).
ADDRESS_SPACE_BYTES = 8_000_000 * 1024


def limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


def run(args: list[str | Path], limit: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT_S,
        preexec_fn=limit_address_space if limit else None,
    )


def assert_clean_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit code 1 (not a signal, not an abort) and every needle on stderr."""
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


# Broadcasting a column of n against a row of n gives an n x n intermediate;
# the graph returns a 1x4 corner of it, so inputs and outputs stay small.
def outer_sum_graph(n: int) -> str:
    return f"""\
        func.func @forward(%a: tensor<{n}x1xf32>, %b: tensor<1x{n}xf32>) -> tensor<1x4xf32> {{
          %s = seg.add %a, %b : tensor<{n}x1xf32>, tensor<1x{n}xf32> -> tensor<{n}x{n}xf32>
          %c = seg.slice %s start = [0, 0] size = [1, 4] step = [1, 1] : tensor<{n}x{n}xf32> -> tensor<1x4xf32>
          return %c : tensor<1x4xf32>
        }}
        """


def outer_sum_inputs(tmp_path: Path, n: int, rng: np.random.Generator) -> tuple[Path, Path, np.ndarray]:
    a = rng.standard_normal((n, 1)).astype(np.float32)
    b = rng.standard_normal((1, n)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    return tmp_path / "a.npy", tmp_path / "b.npy", (a[:1] + b[:, :4])


LIMIT_MESSAGE = "exceeds the limit of 1099511627776 bytes (1 TiB) per tensor"


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_tensor_over_the_limit_is_refused_by_compile(tmp_path: Path, target: str) -> None:
    # 2^62 f32: its byte count wrapped to 0, a 64-byte buffer was overrun.
    graph = write(
        tmp_path / "huge.mlir",
        """\
        func.func @forward(%x: tensor<4611686018427387904xf32>) -> tensor<4611686018427387904xf32> {
          %y = seg.relu %x : tensor<4611686018427387904xf32>
          return %y : tensor<4611686018427387904xf32>
        }
        """,
    )
    proc = run([tool("gpuopt-compile"), graph, f"--target={target}", "-o", tmp_path / "m.out"])
    assert_clean_error(
        proc,
        "huge.mlir:2:",
        "'seg.relu' op operand #0 of type 'tensor<4611686018427387904xf32>'",
        LIMIT_MESSAGE,
    )
    assert not (tmp_path / "m.out").exists()


def test_cuda_arena_over_the_limit_is_refused(tmp_path: Path) -> None:
    # Two tensors at the limit: the arena holding both is 2 TiB (compiled
    # before, with "arena_bytes": 2199023255552).
    graph = write(
        tmp_path / "arena.mlir",
        """\
        func.func @forward(%x: tensor<274877906944xf32>) -> tensor<274877906944xf32> {
          %y = seg.relu %x : tensor<274877906944xf32>
          return %y : tensor<274877906944xf32>
        }
        """,
    )
    proc = run([tool("gpuopt-compile"), graph, "--target=cuda", "-o", tmp_path / "m.gpuopt"])
    assert_clean_error(
        proc,
        "arena.mlir:1:1: error: 'func.func' op needs a CUDA arena of more than 1099511627776 bytes (1 TiB)",
    )


def test_huge_intermediate_is_a_located_error(tmp_path: Path, rng: np.random.Generator) -> None:
    # 2^20 x 2^20 f32 = 4 TiB from 4 MiB inputs.
    n = 1 << 20
    graph = write(tmp_path / "big.mlir", outer_sum_graph(n))
    a, b, _ = outer_sum_inputs(tmp_path, n, rng)
    located = ("big.mlir:2:", f"'seg.add' op result #0 of type 'tensor<{n}x{n}xf32>'", LIMIT_MESSAGE)
    for target in ("cpu", "cuda"):
        proc = run([tool("gpuopt-compile"), graph, f"--target={target}", "-o", tmp_path / "m.out"])
        assert_clean_error(proc, *located)
    for backend in ("cpu", "reference"):
        proc = run(
            [tool("gpuopt-run"), graph, f"--input=@{a}", f"--input=@{b}", f"--backend={backend}"],
            limit=True,
        )
        assert_clean_error(proc, *located)


@pytest.fixture(scope="module")
def outer_sum_libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Compiled outer-sum models: 2^17 (64 GiB intermediate) and 64 (16 KiB)."""
    out = tmp_path_factory.mktemp("outer_sum")
    libraries = {}
    for n in (1 << 17, 64):
        graph = write(out / f"outer{n}.mlir", outer_sum_graph(n))
        so = out / f"outer{n}.so"
        proc = run([tool("gpuopt-compile"), graph, "--target=cpu", "-o", so])
        assert proc.returncode == 0, proc.stderr
        libraries[n] = so
    return libraries


# The generated code asks for the 2^36 bytes plus its alignment.
OOM_MESSAGE = (
    "out of memory: cannot allocate a buffer of 68719476800 bytes (65536 MiB) for an intermediate tensor"
)


def test_allocation_failure_in_the_library_is_an_error(
    tmp_path: Path, outer_sum_libraries: dict[int, Path], rng: np.random.Generator
) -> None:
    a, b, _ = outer_sum_inputs(tmp_path, 1 << 17, rng)
    proc = run(
        [tool("gpuopt-run"), outer_sum_libraries[1 << 17], f"--input=@{a}", f"--input=@{b}"], limit=True
    )
    assert_clean_error(proc, "gpuopt_model_run: " + OOM_MESSAGE)


def test_allocation_failure_in_the_jit_is_an_error(tmp_path: Path, rng: np.random.Generator) -> None:
    n = 1 << 17
    graph = write(tmp_path / "outer.mlir", outer_sum_graph(n))
    a, b, _ = outer_sum_inputs(tmp_path, n, rng)
    proc = run([tool("gpuopt-run"), graph, f"--input=@{a}", f"--input=@{b}", "--backend=cpu"], limit=True)
    assert_clean_error(proc, "outer.mlir:1:", "running @forward failed: " + OOM_MESSAGE)
    # The reference backend's error for the same graph is located too.
    proc = run(
        [tool("gpuopt-run"), graph, f"--input=@{a}", f"--input=@{b}", "--backend=reference"], limit=True
    )
    assert_clean_error(proc, "outer.mlir:2:", "can't allocate memory")


def test_result_allocation_failure_is_an_error(tmp_path: Path, rng: np.random.Generator) -> None:
    # A 64 GiB result: the JIT and gpuopt-run allocate it themselves (before:
    # LLVM's abort).
    n = 1 << 17
    graph = write(
        tmp_path / "big_result.mlir",
        f"""\
        func.func @forward(%a: tensor<{n}x1xf32>, %b: tensor<1x{n}xf32>) -> tensor<{n}x{n}xf32> {{
          %s = seg.add %a, %b : tensor<{n}x1xf32>, tensor<1x{n}xf32> -> tensor<{n}x{n}xf32>
          return %s : tensor<{n}x{n}xf32>
        }}
        """,
    )
    a, b, _ = outer_sum_inputs(tmp_path, n, rng)
    proc = run([tool("gpuopt-run"), graph, f"--input=@{a}", f"--input=@{b}", "--backend=cpu"], limit=True)
    assert_clean_error(
        proc, "big_result.mlir:1:1: error: out of memory allocating result 0 ('tensor<131072x131072xf32>')"
    )
    so = tmp_path / "big_result.so"
    proc = run([tool("gpuopt-compile"), graph, "--target=cpu", "-o", so])
    assert proc.returncode == 0, proc.stderr
    proc = run([tool("gpuopt-run"), so, f"--input=@{a}", f"--input=@{b}"], limit=True)
    assert_clean_error(proc, "big_result.so: out of memory allocating output 0 [131072, 131072]")


# A 2x2 output from a 1x1 input padded by 50000 on each side: the conv2d
# kernel's padded copy of the input takes 40 GB (within the tensor limit),
# which it cannot allocate under the address-space limit.
PADDED_CONV = """\
    func.func @forward(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> {
      %y = seg.conv2d %x, %w stride = [100000, 100000] padding = [50000, 50000] dilation = [1, 1] groups = 1
           : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x2x2xf32>
      return %y : tensor<1x1x2x2xf32>
    }
    """


def test_kernel_allocation_failure_is_an_error(tmp_path: Path) -> None:
    # Before: an abort ("LLVM ERROR: out of memory" in the tools, whose
    # new-handler is LLVM's; "conv2d kernel failed" elsewhere).
    graph = write(tmp_path / "conv.mlir", PADDED_CONV)
    for name in ("x", "w"):
        np.save(tmp_path / f"{name}.npy", np.ones((1, 1, 1, 1), dtype=np.float32))
    inputs = [f"--input=@{tmp_path / 'x.npy'}", f"--input=@{tmp_path / 'w.npy'}"]
    so = tmp_path / "conv.so"
    proc = run([tool("gpuopt-compile"), graph, "--target=cpu", "-o", so])
    assert proc.returncode == 0, proc.stderr
    message = "the conv2d kernel failed: std::bad_alloc"
    assert_clean_error(run([tool("gpuopt-run"), so, *inputs], limit=True), "gpuopt_model_run: " + message)
    assert_clean_error(
        run([tool("gpuopt-run"), graph, *inputs, "--backend=cpu"], limit=True),
        "conv.mlir:1:1: error: running @forward failed: " + message,
    )


def test_allocation_failure_in_the_initializer_is_an_error(tmp_path: Path, rng: np.random.Generator) -> None:
    # The 64 GiB outer sum of two parameters is load-time work: it runs in
    # gpuopt_model_create, which fails with the message (before: an abort).
    n = 1 << 17
    graph = write(
        tmp_path / "init.mlir",
        f"""\
        func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {{
          %a = seg.param "a" : tensor<{n}x1xf32>
          %b = seg.param "b" : tensor<1x{n}xf32>
          %s = seg.add %a, %b : tensor<{n}x1xf32>, tensor<1x{n}xf32> -> tensor<{n}x{n}xf32>
          %c = seg.slice %s start = [0, 0] size = [1, 4] step = [1, 1] : tensor<{n}x{n}xf32> -> tensor<1x4xf32>
          %y = seg.add %x, %c : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
          return %y : tensor<1x4xf32>
        }}
        """,
    )
    weights = tmp_path / "w.safetensors"
    save_file(
        {
            "a": rng.standard_normal((n, 1)).astype(np.float32),
            "b": rng.standard_normal((1, n)).astype(np.float32),
        },
        str(weights),
    )
    np.save(tmp_path / "x.npy", np.ones((1, 4), dtype=np.float32))
    so = tmp_path / "init.so"
    proc = run([tool("gpuopt-compile"), graph, "--target=cpu", "-o", so])
    assert proc.returncode == 0, proc.stderr
    proc = run([tool("gpuopt-run"), so, f"--weights={weights}", f"--input=@{tmp_path / 'x.npy'}"], limit=True)
    assert_clean_error(proc, "the load-time initializer failed: " + OOM_MESSAGE)


# Runs in a child process: the address-space limit must not bind pytest.
PYTHON_CHILD = """\
import sys
import numpy as np
from gpuopt.compiled import CompiledModel, CompiledModelError

big, small, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(seed)
with CompiledModel(big, None) as model:
    a = rng.standard_normal((1 << 17, 1)).astype(np.float32)
    b = rng.standard_normal((1, 1 << 17)).astype(np.float32)
    for attempt in range(2):  # the failure leaves the library usable
        try:
            model.run(a, b)
            sys.exit("the 64 GiB intermediate was allocated")
        except CompiledModelError as e:
            print("error:", e)
with CompiledModel(small, None) as model:
    a = rng.standard_normal((64, 1)).astype(np.float32)
    b = rng.standard_normal((1, 64)).astype(np.float32)
    (y,) = model.run(a, b)
    np.testing.assert_allclose(y, a[:1] + b[:, :4], rtol=1e-6)
    print("small model ok")
"""


def test_allocation_failure_in_python_is_an_exception(outer_sum_libraries: dict[int, Path]) -> None:
    proc = run(
        [sys.executable, "-c", PYTHON_CHILD, outer_sum_libraries[1 << 17], outer_sum_libraries[64], "7"],
        limit=True,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.count("error: gpuopt_model_run: " + OOM_MESSAGE) == 2, proc.stdout
    assert "small model ok" in proc.stdout


def test_calls_are_inlined_and_run(tmp_path: Path, rng: np.random.Generator) -> None:
    # Acyclic calls lower (inlined first): the result equals NumPy's. Before,
    # bufferizing the calls read uninitialized memory (valgrind; a SEGV in the
    # seg-lowering fuzzer) and the GPU pipeline lost the callee.
    graph = write(
        tmp_path / "calls.mlir",
        """\
        func.func @scale(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
          %y = seg.add %x, %x : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
          return %y : tensor<2x8xf32>
        }
        func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
          %a = func.call @scale(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
          %r = seg.relu %a : tensor<2x8xf32>
          %b = func.call @scale(%r) : (tensor<2x8xf32>) -> tensor<2x8xf32>
          return %b : tensor<2x8xf32>
        }
        """,
    )
    x = rng.standard_normal((2, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npy"
    proc = run(
        [tool("gpuopt-run"), graph, f"--input=@{tmp_path / 'x.npy'}", f"--output=@{out}", "--backend=cpu"]
    )
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(out), 2 * np.maximum(2 * x, 0), rtol=1e-6)
    proc = run([tool("gpuopt-compile"), graph, "--target=cuda", "-o", tmp_path / "calls.gpuopt"])
    assert proc.returncode == 0, proc.stderr


RECURSIVE = """\
    func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
      %r = seg.relu %x : tensor<1x4xf32>
      %y = func.call @forward(%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      return %y : tensor<1x4xf32>
    }
    """

CYCLE = """\
    func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
      %y = func.call @helper(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      return %y : tensor<1x4xf32>
    }
    func.func @helper(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
      %r = seg.relu %x : tensor<1x4xf32>
      %y = func.call @forward(%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      return %y : tensor<1x4xf32>
    }
    """


@pytest.mark.parametrize(
    ("graph", "where", "cycle"),
    [
        (RECURSIVE, ":3:", "@forward -> @forward"),
        (CYCLE, ":7:", "@forward -> @helper -> @forward"),
    ],
    ids=["recursion", "cycle"],
)
def test_call_cycles_are_refused_by_every_tool(tmp_path: Path, graph: str, where: str, cycle: str) -> None:
    path = write(tmp_path / "rec.mlir", graph)
    x = tmp_path / "x.npy"
    np.save(x, np.ones((1, 4), dtype=np.float32))
    message = f"(call cycle: {cycle}); the lowerings compile no recursion"
    commands = [
        [tool("gpuopt-opt"), path, "--gpuopt-cpu-lowering"],
        [tool("gpuopt-opt"), path, "--gpuopt-gpu-lowering=serialize=false"],
        [tool("gpuopt-compile"), path, "--target=cpu", "-o", tmp_path / "m.so"],
        [tool("gpuopt-compile"), path, "--target=cuda", "-o", tmp_path / "m.gpuopt"],
        [tool("gpuopt-run"), path, f"--input=@{x}", "--backend=cpu"],
    ]
    for command in commands:
        proc = run(command)
        assert_clean_error(proc, "rec.mlir" + where, message)
