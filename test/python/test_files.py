"""Hostile and careless files given to gpuopt's tools (issue 12, items 4, 5, 6, 9).

Each case must end in a clear message and exit status 1 within seconds: never
a signal, a hang, an unbounded read, or a destroyed file. Every tool runs under
an address-space limit (so that a regression to an unbounded read fails the
test instead of taking the machine's memory) and a timeout (so that a FIFO
that blocks fails the test instead of hanging it).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from gpuopt.tools import tool

# Far above what an error path needs, far below the machine's memory.
ADDRESS_SPACE_LIMIT = 8 << 30
TIMEOUT_S = 120
NESTING_LIMIT = 256


def run(
    name: str,
    *args: object,
    stdin: bytes | None = None,
    max_file_bytes: int | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Runs tool `name`; `max_file_bytes` makes every write beyond it fail (EFBIG)."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
        if max_file_bytes is not None:
            # A write past the limit then fails with EFBIG instead of killing
            # the process with SIGXFSZ; the ignored disposition survives exec.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run(
        [str(tool(name)), *[str(a) for a in args]],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT_S,
        preexec_fn=limits,
        env=None if env is None else {**os.environ, **env},
        check=False,
    )


def expect_error(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    stderr = proc.stderr.decode(errors="replace")
    assert proc.returncode == 1, f"exit {proc.returncode}\nstderr:\n{stderr}"
    for fragment in fragments:
        assert fragment in stderr, f"{fragment!r} not in:\n{stderr}"
    return stderr


def run_model(files: dict[str, Path], *extra: object, **kwargs: object) -> subprocess.CompletedProcess:
    """gpuopt-run on the `files` fixture's model, weights and input, then `extra`."""
    return run(
        "gpuopt-run",
        files["model"],
        f"--weights={files['weights']}",
        f"--input=@{files['x']}",
        *extra,
        **kwargs,
    )


def test_valid_run_under_the_test_limits(files: dict[str, Path]) -> None:
    """The limits of run() leave room for a real run, so refusals below are the tools'."""
    out = files["dir"] / "y.npy"
    proc = run_model(files, f"--output=@{out}")
    assert proc.returncode == 0, proc.stderr.decode()
    assert np.load(out).shape == (1, 4, 8, 8)


# --- Item 4: special files are refused before they are read ---------------------------------------

SPECIAL = ["/dev/zero", "/dev/urandom", "fifo", "directory"]
KIND = {
    "/dev/zero": "character device",
    "/dev/urandom": "character device",
    "fifo": "fifo",
    "directory": "directory",
}


def special_file(kind: str, tmp_path: Path) -> str:
    if kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
        return str(path)
    if kind == "directory":
        path = tmp_path / "dir"
        path.mkdir()
        return str(path)
    return kind


# (tool, which file is special): every reader of every tool.
ROLES = [
    ("gpuopt-opt", "mlir"),
    ("gpuopt-compile", "mlir"),
    ("gpuopt-run", "mlir"),
    ("gpuopt-run", "weights"),
    ("gpuopt-run", "input"),
]


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize(("name", "role"), ROLES)
def test_special_file_is_refused(files: dict[str, Path], name: str, role: str, kind: str) -> None:
    special = special_file(kind, files["dir"])
    if name == "gpuopt-opt":
        args: list[object] = [special, "-o", files["dir"] / "out.mlir"]
    elif name == "gpuopt-compile":
        args = [special, "-o", files["dir"] / "out.so"]
    else:
        model = special if role == "mlir" else files["model"]
        weights = special if role == "weights" else files["weights"]
        x = special if role == "input" else files["x"]
        args = [model, f"--weights={weights}", f"--input=@{x}"]
    expect_error(run(name, *args), f"{special}: not a regular file ({KIND[kind]})")


def test_stdin_pipe_still_reads(files: dict[str, Path]) -> None:
    """gpuopt-opt's "-" (a pipe here) is read to its end, within the limit."""
    proc = run("gpuopt-opt", "-", stdin=files["model"].read_bytes())
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"seg.conv2d" in proc.stdout


# --- Item 5: outputs never destroy a file ----------------------------------------------------------


def test_opt_output_equal_to_input_is_refused(files: dict[str, Path]) -> None:
    before = files["model"].read_bytes()
    expect_error(run("gpuopt-opt", files["model"], "-o", files["model"]), "refusing to overwrite an input")
    assert files["model"].read_bytes() == before


def test_opt_output_linked_to_input_is_refused(files: dict[str, Path]) -> None:
    """Another name for the same file (a hard link) is the same file."""
    link = files["dir"] / "link.mlir"
    os.link(files["model"], link)
    before = files["model"].read_bytes()
    expect_error(run("gpuopt-opt", files["model"], "--gpuopt-optimize", "-o", link), "refusing to overwrite")
    assert files["model"].read_bytes() == before


def test_opt_failing_pipeline_keeps_the_old_output(files: dict[str, Path]) -> None:
    out = files["dir"] / "out.mlir"
    out.write_text("// the previous result\n")
    proc = run("gpuopt-opt", files["model"], "--pass-pipeline=builtin.module(no-such-pass)", "-o", out)
    assert proc.returncode == 1, proc.stderr.decode()
    assert out.read_text() == "// the previous result\n"
    assert sorted(p.name for p in files["dir"].iterdir()) == sorted(
        ["model.mlir", "w.safetensors", "x.npy", "out.mlir"]
    )


def test_opt_failing_write_keeps_the_old_output(files: dict[str, Path]) -> None:
    """A write that fails midway (file-size limit: EFBIG) leaves the old output whole."""
    out = files["dir"] / "out.mlir"
    old = b"// the previous result\n" * 100
    out.write_bytes(old)
    proc = run("gpuopt-opt", files["model"], "-o", out, max_file_bytes=100)
    expect_error(proc, f"{out}: cannot write")
    assert out.read_bytes() == old
    assert not [p for p in files["dir"].iterdir() if ".tmp." in p.name], "the temporary file was left behind"


@pytest.mark.parametrize("which", ["weights", "x", "model"])
def test_run_output_equal_to_an_input_is_refused(files: dict[str, Path], which: str) -> None:
    before = files[which].read_bytes()
    proc = run_model(files, f"--output=@{files[which]}")
    expect_error(proc, f"--output {files[which]} is ", "refusing to overwrite an input")
    assert files[which].read_bytes() == before


def test_run_failing_npy_write_keeps_the_old_output(files: dict[str, Path]) -> None:
    out = files["dir"] / "y.npy"
    np.save(out, np.full((1, 4, 8, 8), 7.0, np.float32))
    old = out.read_bytes()
    # The result's .npy is 1,152 bytes; the limit stops its write midway.
    proc = run_model(files, f"--output=@{out}", max_file_bytes=600)
    expect_error(proc, f"{out}: cannot write")
    assert out.read_bytes() == old
    assert not [p for p in files["dir"].iterdir() if ".tmp." in p.name], "the temporary file was left behind"


def test_run_output_to_a_directory_is_refused(files: dict[str, Path]) -> None:
    target = files["dir"] / "out"
    target.mkdir()
    proc = run_model(files, f"--output=@{target}")
    expect_error(proc, f"{target}: cannot write: not a regular file (directory)")
    assert target.is_dir()


def test_compile_output_equal_to_input_is_refused(files: dict[str, Path]) -> None:
    before = files["model"].read_bytes()
    expect_error(
        run("gpuopt-compile", files["model"], "-o", files["model"]), "refusing to overwrite an input"
    )
    assert files["model"].read_bytes() == before


def test_compile_failing_link_keeps_the_old_library(files: dict[str, Path]) -> None:
    """A link that fails midway leaves the previous library whole (and loadable)."""
    lib = files["dir"] / "model.so"
    proc = run("gpuopt-compile", files["model"], "-o", lib)
    assert proc.returncode == 0, proc.stderr.decode()
    old = lib.read_bytes()
    os.utime(lib, (0, 0))
    # The object file (a few KB) fits the limit, the linked library does not.
    limit = len(old) // 2
    proc = run(
        "gpuopt-compile", files["model"], "--pipeline=gpuopt-optimize", "-o", lib, max_file_bytes=limit
    )
    assert proc.returncode == 1, proc.stderr.decode()
    assert lib.read_bytes() == old
    assert os.stat(lib).st_mtime == 0
    assert not [p for p in files["dir"].iterdir() if ".tmp." in p.name], (
        "the temporary directory was left behind"
    )


def test_cuda_run_output_equal_to_an_input_is_refused(files: dict[str, Path]) -> None:
    """Refused before the (here absent) artifact is read: no GPU needed."""
    before = files["weights"].read_bytes()
    proc = run(
        "gpuopt-cuda-run",
        files["dir"] / "model.gpuopt",
        f"--weights={files['weights']}",
        f"--input=@{files['x']}",
        f"--output=@{files['weights']}",
    )
    expect_error(proc, "refusing to overwrite an input")
    proc = run(
        "gpuopt-cuda-run",
        files["dir"] / "model.gpuopt",
        f"--weights={files['weights']}",
        f"--input=@{files['x']}",
        f"--json={files['x']}",
    )
    expect_error(proc, f"--json {files['x']} is --input")
    assert files["weights"].read_bytes() == before


# --- Item 6: nesting beyond the limit is refused before MLIR parses it -----------------------------

DEPTH = 10_000


def deep_arrays(depth: int) -> str:
    return "module attributes {my.deep = " + "[" * depth + "]" * depth + "} {}\n"


def deep_regions(depth: int) -> str:
    return "module {\n" * depth + "}\n" * depth


def deep_types(depth: int) -> str:
    return "func.func private @f(" + "tensor<" * depth + "f32" + ">" * depth + ")\n"


@pytest.mark.parametrize("text", [deep_arrays, deep_regions, deep_types])
@pytest.mark.parametrize("name", ["gpuopt-opt", "gpuopt-compile", "gpuopt-run"])
def test_deep_nesting_is_refused(files: dict[str, Path], name: str, text) -> None:
    deep = files["dir"] / "deep.mlir"
    deep.write_text(text(DEPTH))
    args: list[object] = [deep] + (["-o", files["dir"] / "out"] if name != "gpuopt-run" else [])
    stderr = expect_error(run(name, *args), f"nesting deeper than {NESTING_LIMIT}")
    assert f"{deep}:" in stderr


def test_deep_nesting_from_stdin_is_refused() -> None:
    expect_error(
        run("gpuopt-opt", "-", stdin=deep_arrays(DEPTH).encode()), "<stdin>:1:", "nesting deeper than"
    )


def test_nesting_within_the_limit_parses(files: dict[str, Path]) -> None:
    """The limit refuses nothing real: 200 levels parse, and brackets in strings and comments do not count."""
    ok = files["dir"] / "ok.mlir"
    ok.write_text(
        "// "
        + "[" * DEPTH
        + "\n"
        + 'module attributes {my.s = "'
        + "{[(<" * DEPTH
        + '", my.deep = '
        + "[" * 200
        + "]" * 200
        + "} {}\n"
    )
    proc = run("gpuopt-opt", ok)
    assert proc.returncode == 0, proc.stderr.decode()


# --- Item 9: minor items ---------------------------------------------------------------------------


def test_quiet_keeps_warnings(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "conv.bias": rng.standard_normal(4).astype(np.float32),
            "extra": np.zeros(3, np.float32),
        },
        str(files["weights"]),
    )
    proc = run_model(files, "--quiet")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b""
    assert b"gpuopt-run: warning: 1 tensor(s)" in proc.stderr


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    """A safetensors file written by hand, so that any name can be a key."""
    header: dict[str, object] = {}
    data = b""
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


HOSTILE = "evil\x1b[2J\x00name\n"
ESCAPED = "evil\\x1b[2J\\x00name\\x0a"


def test_control_bytes_in_names_are_escaped(files: dict[str, Path]) -> None:
    write_safetensors(files["weights"], {HOSTILE: ("F8_E4M3", [1], b"\0")})
    proc = run_model(files)
    stderr = expect_error(proc, f"tensor '{ESCAPED}': unsupported dtype")
    assert "\x1b" not in stderr and "\x00" not in stderr


def test_control_bytes_in_unused_names_are_escaped(files: dict[str, Path], rng: np.random.Generator) -> None:
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    write_safetensors(
        files["weights"],
        {
            "conv.weight": ("F32", [4, 3, 3, 3], w.tobytes()),
            "conv.bias": ("F32", [4], b.tobytes()),
            HOSTILE: ("F32", [1], b"\0\0\0\0"),
        },
    )
    proc = run_model(files)
    assert proc.returncode == 0, proc.stderr.decode()
    stderr = proc.stderr.decode()
    assert f"'{ESCAPED}'" in stderr, stderr
    assert "\x1b" not in stderr and "\x00" not in stderr


@pytest.mark.parametrize(("dtype", "np_dtype"), [("F16", np.float16), ("F64", np.float64)])
def test_reference_backend_refuses_non_f32_weights_like_cpu(
    files: dict[str, Path], rng: np.random.Generator, dtype: str, np_dtype: type
) -> None:
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np_dtype),
            "conv.bias": rng.standard_normal(4).astype(np.float32),
        },
        str(files["weights"]),
    )
    proc = run_model(files, "--backend=reference")
    expect_error(
        proc,
        f"parameter 'conv.weight' is {dtype} in the weights file, but the graph expects",
        "gpuopt does not convert weights",
    )


def test_misaligned_weights_are_read_correctly(files: dict[str, Path]) -> None:
    """Weights are mapped, not copied, where aligned; a header that misaligns them still reads right."""
    out_aligned = files["dir"] / "a.npy"
    base = [files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}"]
    assert run("gpuopt-run", *base, f"--output=@{out_aligned}").returncode == 0
    raw = files["weights"].read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = raw[8 : 8 + n].rstrip(b" ") + b" "  # one space: the data starts at 8 + n', not a multiple of 4
    if (8 + len(header)) % 4 == 0:
        header += b" "
    misaligned = files["dir"] / "m.safetensors"
    misaligned.write_bytes(struct.pack("<Q", len(header)) + header + raw[8 + n :])
    out = files["dir"] / "m.npy"
    for backend in ["reference", "cpu"]:
        proc = run(
            "gpuopt-run",
            files["model"],
            f"--weights={misaligned}",
            f"--input=@{files['x']}",
            f"--output=@{out}",
            f"--backend={backend}",
        )
        assert proc.returncode == 0, proc.stderr.decode()
        np.testing.assert_allclose(np.load(out), np.load(out_aligned), rtol=1e-5, atol=1e-5)


def test_too_many_threads_warns_once(files: dict[str, Path]) -> None:
    proc = run_model(files, "--backend=cpu", "--runs=3", env={"GPUOPT_NUM_THREADS": "100000"})
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr.decode().count("GPUOPT_NUM_THREADS=100000 exceeds the limit") == 1, (
        proc.stderr.decode()
    )


# --- Weights are a private copy: the file changing under a live model changes nothing -----------

TRUNCATE_AFTER_LOAD = """
import os, sys
import numpy as np
from gpuopt.compiled import CompiledModel

so, weights, x = sys.argv[1:]
model = CompiledModel(so, weights)
x = np.load(x)
before = model.run(x)[0].copy()
size = os.path.getsize(weights)
# Rewritten in place with other bytes (open('wb') keeps the inode), then truncated.
with open(weights, "r+b") as f:
    f.write(os.urandom(size))
os.truncate(weights, 100)
after = model.run(x)[0]
np.testing.assert_array_equal(after, before)
print("same")
"""


def test_compiled_model_survives_its_weights_being_truncated(files: dict[str, Path]) -> None:
    """A mapping of the file would raise SIGBUS (or read the new bytes); a subprocess, so a crash fails the test."""
    so = files["dir"] / "m.so"
    proc = run("gpuopt-compile", files["model"], "-o", so)
    assert proc.returncode == 0, proc.stderr.decode()
    proc = subprocess.run(
        [sys.executable, "-c", TRUNCATE_AFTER_LOAD, so, files["weights"], files["x"]],
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, b"same\n"), proc.stderr.decode(errors="replace")


# --- Affine expressions chain operators without brackets; the pre-scan bounds them ---------------

OPERATOR_LIMIT = 1024
CHAIN = 100_000


def plus_chain(n: int) -> str:
    return "#m = affine_map<(d0) -> (" + " + ".join(["d0"] * (n + 1)) + ")>\nmodule {}\n"


def negation_chain(n: int) -> str:
    return "#m = affine_map<(d0) -> (" + "- " * n + "d0)>\nmodule {}\n"


def bracketed_plus_chain(n: int) -> str:
    # The brackets nest one level each, the chain around them goes on.
    return "#m = affine_map<(d0) -> (d0" + " + (d0)" * n + ")>\nmodule {}\n"


def mod_chain(n: int) -> str:
    return "#s = affine_set<(d0) : (d0" + " mod 2" * n + " >= 0)>\nmodule {}\n"


@pytest.mark.parametrize("text", [plus_chain, negation_chain, bracketed_plus_chain])
@pytest.mark.parametrize("name", ["gpuopt-opt", "gpuopt-compile", "gpuopt-run"])
def test_long_affine_chains_are_refused(files: dict[str, Path], name: str, text) -> None:
    """These overflowed the parser's stack (SIGSEGV) in every tool."""
    chain = files["dir"] / "chain.mlir"
    chain.write_text(text(CHAIN))
    args: list[object] = [chain] + (["-o", files["dir"] / "out"] if name != "gpuopt-run" else [])
    stderr = expect_error(run(name, *args), f"more than {OPERATOR_LIMIT} operators in one expression")
    assert f"{chain}:1:" in stderr


@pytest.mark.parametrize("text", [plus_chain, negation_chain, bracketed_plus_chain, mod_chain])
def test_affine_chains_within_the_limit_parse(files: dict[str, Path], text) -> None:
    ok = files["dir"] / "ok.mlir"
    ok.write_text(text(OPERATOR_LIMIT))
    proc = run("gpuopt-opt", ok, "-o", files["dir"] / "out.mlir")
    assert proc.returncode == 0, proc.stderr.decode()


# --- Out of memory while reading MLIR is an error, not LLVM's abort --------------------------------


def test_mlir_too_large_for_memory_is_an_error(files: dict[str, Path]) -> None:
    big = files["dir"] / "big.mlir"
    with open(big, "wb") as f:
        f.truncate(1500 << 20)  # sparse: costs no disk
    limit = 1200 << 20

    def run_limited(*args: object, stdin=None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(tool("gpuopt-opt")), *[str(a) for a in args]],
            stdin=stdin,
            capture_output=True,
            timeout=TIMEOUT_S,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
            check=False,
        )

    expect_error(run_limited(big, "-o", files["dir"] / "x.mlir"), f"{big}: cannot allocate 1572864000 bytes")
    with open(big, "rb") as stdin:
        expect_error(run_limited("-", "-o", files["dir"] / "x.mlir", stdin=stdin), "<stdin>: cannot allocate")


# --- Atomic outputs keep the old file's mode and write through dangling links ---------------------


def test_opt_output_keeps_a_private_mode(files: dict[str, Path]) -> None:
    out = files["dir"] / "out.mlir"
    out.write_text("old")
    out.chmod(0o600)
    proc = run("gpuopt-opt", files["model"], "-o", out)
    assert proc.returncode == 0, proc.stderr.decode()
    assert "seg.conv2d" in out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_opt_output_through_a_dangling_symlink_creates_its_target(files: dict[str, Path]) -> None:
    """As Python's atomic_output does: the link stays, its target is created."""
    (files["dir"] / "sub").mkdir()
    link = files["dir"] / "link.mlir"
    link.symlink_to("sub/target.mlir")
    proc = run("gpuopt-opt", files["model"], "-o", link)
    assert proc.returncode == 0, proc.stderr.decode()
    assert link.is_symlink()
    assert "seg.conv2d" in (files["dir"] / "sub" / "target.mlir").read_text()
