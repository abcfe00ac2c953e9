"""The GPU benchmark's dry run: benchmarks/gpu/{prepare.sh,run.sh,bench.py}
without a GPU (docs/benchmarks/gpu.md).

prepare.sh --dry-run makes three 16x16 artifacts (Rolling-UNet-S and UNet
optimized, one Rolling-UNet-S ablation); run.sh --dry-run runs them through
the host emulation (gpuopt-cuda-run --emulate, with --runs/--profile/--json
as on a GPU) and PyTorch on the CPU, 2 timed runs a row. The checks: every row is in
results.jsonl in the order of importance, each with its precision mode,
status, tolerance, prediction and floor; the torch.compile rows, whose CPU
compile cannot finish within the 2 s caps given, are skipped with that
reason; results.md shows every row; a run SIGKILLed after its first rows
still renders them (also with a truncated last line); a tiny budget skips
what does not fit, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuopt.tools import REPO_ROOT, build_dir

BIN = build_dir() / "bin"
PREPARE = REPO_ROOT / "benchmarks" / "gpu" / "prepare.sh"
RUN = REPO_ROOT / "benchmarks" / "gpu" / "run.sh"
BENCH = REPO_ROOT / "benchmarks" / "gpu" / "bench.py"
ROWS = [
    "rolling_unet_s-opt",
    "unet-opt",
    "rolling_unet_s-opt-tf32",
    "unet-opt-lib-tf32",
    "rolling_unet_s-only-fuse-roll",
]

pytestmark = pytest.mark.skipif(
    not all((BIN / t).exists() for t in ("gpuopt-compile", "gpuopt-opt", "gpuopt-cuda-run"))
    or not Path("/usr/local/cuda/bin/ptxas").exists(),
    reason="needs gpuopt-compile, gpuopt-opt, gpuopt-cuda-run and the CUDA toolkit's ptxas",
)


def env(tmp: Path, **extra: str) -> dict[str, str]:
    """run.sh's environment; bench.py's weights go under `tmp` (TMPDIR), so
    that a killed run leaves nothing elsewhere."""
    e = dict(os.environ)
    e["TMPDIR"] = str(tmp)
    e.update(
        PYTHON=sys.executable,
        PYTHONPATH=str(REPO_ROOT / "python"),
        BUILD_DIR=str(build_dir()),
        BENCH_RUNTIME=str(BIN / "gpuopt-cuda-run"),
        BENCH_AUTOTUNE_CAP_S="2",
        BENCH_COMPILE_CAP_S="2",
        BENCH_RUNS="2",
        BENCH_WARMUP="0",
    )
    e.update(extra)
    return e


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def complete_records(out: Path) -> list[dict]:
    """The records of a JSONL being written: its complete lines."""
    text = (out / "results.jsonl").read_text() if (out / "results.jsonl").exists() else ""
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    art = tmp_path_factory.mktemp("bench") / "artifacts-dry"
    proc = subprocess.run(
        ["bash", PREPARE, "--dry-run", art],
        env=env(art.parent, ROWS_ONLY=" ".join(ROWS), BENCH_SIZE="16"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bytes" in proc.stdout.splitlines()[-1]
    return art


def test_prepare_manifest(artifacts: Path) -> None:
    manifest = json.loads((artifacts / "manifest.json").read_text())
    assert [m["row"] for m in manifest] == ROWS
    for m in manifest:
        assert m["dry_run"] is True
        assert m["shape"] == [1, 3, 16, 16]
        assert (artifacts / m["artifact"]).stat().st_size == m["artifact_bytes"]
        # The plan's counts, as --inspect prints them.
        out = subprocess.run(
            [BIN / "gpuopt-cuda-run", artifacts / m["artifact"], "--inspect"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert f"{m['launches_at_load']} at load time, {m['launches_per_forward']} per forward" in out
        # The floor's terms: FLOPs and bytes per op, the convs/linears marked.
        assert sum(f for f, _, _ in m["floor_ops"]) == m["flops"]
        assert sum(b for _, b, _ in m["floor_ops"]) == m["bytes"]
        assert any(mac for _, _, mac in m["floor_ops"])
        assert m["predicted_h200_s"] > 0 and m["predicted_model_h200_s"] > 0
        # The plan's launches replace the cost model's kernel count.
        launch = m["cost_device"]["launch_s"]
        assert m["predicted_h200_s"] == pytest.approx(
            m["predicted_ops_h200_s"] + (m["launches_per_forward"] - m["predicted_kernels"]) * launch,
            rel=1e-9,
        )
        # The prediction is of the row's route (library rows: library calls).
        assert m["predicted_route"]["route"] == m["gpu_conv"]
        # The plan's steps: one per launch of a forward, library steps named.
        assert len(m["steps"]) == m["launches_per_forward"]
        assert all(blocks >= 1 and threads >= 1 and ":" in loc for _, blocks, threads, loc in m["steps"])
        libraries = sum(name.startswith("library ") for name, _, _, _ in m["steps"])
        assert libraries == m["library_steps"]
        # The sources of each step, its location among them.
        assert len(m["step_sources"]) == len(m["steps"])
        assert all(loc in src for (_, _, _, loc), src in zip(m["steps"], m["step_sources"]))
        for c in m["convs"]:
            assert 0 < c["utilization"] <= 1 and c["flops"] > 0 and c["blocks"] >= 1
        assert 0 < m["generated_efficiency"] <= 1
    # The optimized generated rows have some (the library row's convolutions are cuDNN steps).
    rows = {m["row"]: m for m in manifest}
    assert rows["rolling_unet_s-opt"]["convs"] and rows["unet-opt"]["convs"]
    # The library row: its convolutions are cuDNN steps, in TF32.
    lib = next(m for m in manifest if m["row"] == "unet-opt-lib-tf32")
    assert lib["gpu_conv"] == "library" and lib["gpuopt_precision"] == "TF32"
    assert 0 < lib["library_steps"] < lib["launches_per_forward"]
    # The generated TF32 row: no library step, its tiles on tensor cores.
    tc = next(m for m in manifest if m["row"] == "rolling_unet_s-opt-tf32")
    assert tc["gpu_conv"] == "generated" and tc["gpuopt_precision"] == "TF32" and tc["library_steps"] == 0
    assert tc["graph"] == "optimized, TF32 tensor cores"
    assert all(
        m["library_steps"] == 0 and m["gpuopt_precision"] == "FP32" for m in manifest if m not in (lib, tc)
    )
    graphs = {m["row"]: m["graph"] for m in manifest}
    assert graphs["rolling_unet_s-only-fuse-roll"] == "ablation: only fuse-roll"
    assert (artifacts / "include" / "flatbuffers" / "flatbuffers.h").is_file()
    # The sources the artifacts were compiled from and are to be read with.
    source = json.loads((artifacts / "source.json").read_text())
    assert source["runtime_digest"] == runtime_digest()
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", source["commit"]), source
    assert isinstance(source["uncommitted_changes"], bool) and source["prepared"].endswith(" UTC")


def runtime_digest() -> str:
    return subprocess.run(
        [REPO_ROOT / "benchmarks" / "gpu" / "runtime-digest.sh"], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_dry_run(artifacts: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    start = time.monotonic()
    proc = subprocess.run(
        ["bash", RUN, "--dry-run", out, artifacts],
        env=env(tmp_path),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recs = records(out)
    assert recs[0]["kind"] == "environment" and recs[0]["dry_run"] is True
    assert recs[1]["kind"] == "ceilings"
    assert recs[-1]["kind"] == "end"
    assert [r["seq"] for r in recs] == list(range(1, len(recs) + 1))
    stages = [r["stage"] for r in recs if r["kind"] == "stage"]
    assert stages == ["correctness", "rolling_unet_s", "unet", "rest"]
    rows = [r for r in recs if r["kind"] == "row"]
    # Stages in order: every row of a stage after every row of the one before.
    order = {s: i for i, s in enumerate(stages)}
    assert [order[r["stage"]] for r in rows] == sorted(order[r["stage"]] for r in rows)

    manifest = {m["row"]: m for m in json.loads((artifacts / "manifest.json").read_text())}
    # (a) every artifact checked once, first, against PyTorch in strict FP32.
    checks = [r for r in rows if r["measure"] == "correctness"]
    assert [r["row"] for r in checks] == ROWS
    assert rows[: len(ROWS)] == checks
    for r in checks:
        precision = manifest[r["row"]]["gpuopt_precision"]
        tolerance = {"FP32": 1e-5, "TF32": 5e-3}[precision]
        assert r["status"] == "ok" and r["precision"] == precision and r["tolerance"] == tolerance
        assert 0 <= r["rel_l2"] <= tolerance
        # Against the float64 model too (informational in the table).
        assert 0 < r["rel_l2_fp64"] <= tolerance
        assert r["launches"] == manifest[r["row"]]["launches_per_forward"]

    timed = [r for r in rows if r["measure"] == "timing"]
    for r in timed:
        assert r["precision"] in ("FP32", "TF32")
        assert r["status"] in ("ok", "skipped"), r
        assert r["floor_ms"] > 0
        if r["status"] == "ok":
            assert r["p10_ms"] <= r["median_ms"] <= r["p90_ms"] and r["runs"] == 2
            assert r["rel_l2"] <= r["tolerance"] == {"FP32": 1e-5, "TF32": 5e-3}[r["precision"]]
        else:
            assert r["reason"]

    def find(stage: str, system: str, precision: str = "FP32") -> dict:
        hits = [r for r in timed if (r["stage"], r["system"], r["precision"]) == (stage, system, precision)]
        assert len(hits) == 1, (stage, system, precision, hits)
        return hits[0]

    # (b) Rolling-UNet-S: gpuopt optimized (emulated, profiled), eager FP32 and TF32, torch.compile.
    g = find("rolling_unet_s", "gpuopt")
    assert g["row"] == "rolling_unet_s-opt" and g["status"] == "ok"
    assert g["launches"] == manifest["rolling_unet_s-opt"]["launches_per_forward"]
    assert g["kernel_busy_ms"] > 0 and "--profile" in g["busy_source"]
    # Each step's profile, named by the manifest's plan steps.
    assert len(g["step_ms"]) == len(g["steps"]) == g["launches"]
    assert sum(g["step_ms"]) == pytest.approx(g["kernel_busy_ms"], rel=1e-3)
    # The generated tiled convolutions found their own steps, measured; the
    # OR-MLP pairs that share a kernel (register tiles, not tiled: fused
    # nests) have none.
    matched = [c for c in g["convs"] if "ms" in c]
    assert len(matched) >= len(g["convs"]) // 2 and all(c["efficiency"] > 0 for c in matched)
    assert len({c["step"] for c in matched}) == len(matched)  # (no shared launches by default)
    assert all("ms" not in c for c in g["convs"] if c not in matched)
    assert g["predicted_h200_ms"] == pytest.approx(manifest["rolling_unet_s-opt"]["predicted_h200_s"] * 1e3)
    # The generated TF32 row right after it, in its stage (emulated: the
    # mma.sync products exactly, on TF32-rounded operands).
    tc = find("rolling_unet_s", "gpuopt", "TF32")
    assert tc["row"] == "rolling_unet_s-opt-tf32" and tc["status"] == "ok" and tc["rel_l2"] > 1e-6
    assert timed.index(tc) == timed.index(g) + 2
    graph = find("rolling_unet_s", "gpuopt + CUDA graph")
    assert graph["status"] == "skipped" and graph["reason"] == "dry run: CUDA graphs need a GPU"
    for precision in ("FP32", "TF32"):
        e = find("rolling_unet_s", "PyTorch eager", precision)
        assert e["status"] == "ok" and e["kernel_busy_ms"] > 0 and e["device"] == "cpu"
    for mode in ("max-autotune", "default"):
        c = find("rolling_unet_s", f'torch.compile(mode="{mode}")')
        assert c["status"] == "skipped"
        assert c["reason"].startswith(f"torch.compile(mode={mode}) did not compile and run within")
    # (c) UNet, (d) the ablation.
    assert find("unet", "gpuopt")["row"] == "unet-opt"
    # The library row right after it, in the UNet stage, in TF32 (emulated:
    # the CPU kernels on TF32-rounded operands).
    tf32 = find("unet", "gpuopt", "TF32")
    assert tf32["row"] == "unet-opt-lib-tf32" and tf32["status"] == "ok" and tf32["rel_l2"] > 1e-6
    ablation = [r for r in timed if r["row"] == "rolling_unet_s-only-fuse-roll"]
    assert [r["stage"] for r in ablation] == ["rest"] and ablation[0]["status"] == "ok"
    # One floor per model and precision, whatever the system.
    floors = {(r["model"], r["precision"]): r["floor_ms"] for r in timed}
    for r in timed:
        assert r["floor_ms"] == floors[(r["model"], r["precision"])]

    md = (out / "results.md").read_text()
    assert md.startswith("# gpuopt GPU benchmark\n\nDRY RUN")
    assert "Run complete in" in md
    source = json.loads((artifacts / "source.json").read_text())
    assert recs[0]["artifacts_source"] == source
    assert f"Artifacts compiled by prepare.sh at commit {source['commit']}" in md
    assert f"(runtime sources {runtime_digest()})." in md
    for r in rows:
        assert f"| {r['seq']} | " in md
    assert "run their convolutions and linears through those libraries in the row's precision" in md
    assert "TF32 for cuDNN convolutions only" in md
    # The slowest steps of the optimized rows: the top step of Rolling-UNet-S's.
    top = max(range(len(g["step_ms"])), key=lambda i: g["step_ms"][i])
    name, blocks, threads, loc = g["steps"][top]
    assert f"| {g['seq']} | rolling_unet_s-opt (FP32) | {top} | {name} | {blocks} x {threads} | {loc} |" in md
    assert f"| {g['seq']} | rolling_unet_s-opt (FP32) | {len(matched)} of {len(g['convs'])} | " in md
    line = next(ln for ln in md.splitlines() if ln.startswith(f"| {g['seq']} | "))
    assert f"{g['median_ms'] / g['floor_ms']:.1f}x" in line
    if (out / "roofline.png").exists():
        assert (out / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "bench.log").read_text().count("bench: [") == len(rows)
    # The whole run stays within run.sh's wall target (300 s).
    assert took < 300
    check_fit(out, rows, tmp_path)


def check_fit(out: Path, rows: list[dict], tmp_path: Path) -> None:
    """bench.py --fit: the efficiencies of the optimized rows with default
    tiling (not the ablation, not the library row), each a time-weighted
    mean of its ops'; --apply refuses a dry run and writes a GPU run's into
    a device file the cost model then reads."""

    def fit(results: Path, *extra: object) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, BENCH, "--fit", results, *extra],
            capture_output=True,
            text=True,
            check=False,
            env=env(tmp_path),
        )

    p = fit(out)
    assert p.returncode == 0, p.stderr
    fits = json.loads(p.stdout)["generated_compute_efficiency"]
    assert fits["fp32"]["rows"] == ["rolling_unet_s-opt", "unet-opt"]
    assert fits["tf32"]["rows"] == ["rolling_unet_s-opt-tf32"]
    for key, names in (("fp32", {"rolling_unet_s-opt", "unet-opt"}), ("tf32", {"rolling_unet_s-opt-tf32"})):
        timed = [
            r for r in rows if r["row"] in names and r["measure"] == "timing" and r["system"] == "gpuopt"
        ]
        ops = [c for r in timed for c in r["convs"] if "ms" in c]
        assert fits[key]["ops"] == len(ops)
        effs = [c["efficiency"] for c in ops]
        assert min(effs) * (1 - 1e-9) <= fits[key]["efficiency"] <= max(effs) * (1 + 1e-9)

    devices = tmp_path / "devices.json"
    shutil.copy(REPO_ROOT / "data" / "devices.json", devices)
    before = devices.read_text()
    p = fit(out, "--apply", devices)
    assert p.returncode == 1 and "a dry run" in p.stderr and "nothing written" in p.stderr
    assert devices.read_text() == before
    # The same records as a GPU run's.
    gpu = tmp_path / "gpu"
    gpu.mkdir()
    lines = []
    for line in (out / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["kind"] == "environment":
            rec |= {"dry_run": False, "device": "NVIDIA H200"}
        lines.append(json.dumps(rec))
    (gpu / "results.jsonl").write_text("\n".join(lines) + "\n")
    p = fit(gpu, "--apply", devices)
    assert p.returncode == 0, p.stderr
    old, new = json.loads(before)["devices"], json.loads(devices.read_text())["devices"]
    assert {k: v for k, v in new.items() if k != "h200"} == {k: v for k, v in old.items() if k != "h200"}
    got = new["h200"]["generated_compute_efficiency"]
    assert got == {k: float(f"{v['efficiency']:.3g}") for k, v in fits.items()}
    assert new["h200"]["source"].startswith(
        old["h200"]["source"] + "; generated_compute_efficiency fp32, tf32 fitted"
    )
    assert "NVIDIA H200" in new["h200"]["source"]
    # Applied again: the note replaced, not repeated.
    p = fit(gpu, "--apply", devices)
    assert p.returncode == 0, p.stderr
    assert json.loads(devices.read_text())["devices"]["h200"]["source"] == new["h200"]["source"]
    # Another GPU's results are not the H200's.
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.jsonl").write_text(
        (gpu / "results.jsonl").read_text().replace("NVIDIA H200", "NVIDIA H100 80GB HBM3")
    )
    p = fit(other, "--apply", devices)
    assert p.returncode == 1 and "measured on 'NVIDIA H100 80GB HBM3', not on h200's" in p.stderr, p.stderr
    # The cost model reads the file written.
    graph = tmp_path / "conv.mlir"
    graph.write_text(
        "func.func @f(%x: tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32> {\n"
        '  %w = seg.param "w" : tensor<64x64x1x1xf32>\n'
        "  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1\n"
        "    : tensor<1x64x16x16xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x16x16xf32>\n"
        "  return %y : tensor<1x64x16x16xf32>\n}\n"
    )
    report = subprocess.run(
        [
            BIN / "gpuopt-opt",
            "--seg-cost-report=device=h200 devices=" + str(devices) + " gpu-conv=generated format=json",
        ]
        + [graph, "-o", os.devnull],
        capture_output=True,
        text=True,
        check=False,
    )
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["device"]["generated_compute_efficiency"] == got
    # Times a thousand million times shorter: efficiencies above 1, refused.
    written = devices.read_text()
    fast = []
    for line in (gpu / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        for c in rec.get("convs") or []:
            if "ms" in c:
                c |= {"ms": c["ms"] * 1e-9, "efficiency": c["efficiency"] * 1e9}
        fast.append(json.dumps(rec))
    (gpu / "results.jsonl").write_text("\n".join(fast) + "\n")
    p = fit(gpu, "--apply", devices)
    assert p.returncode == 1 and "fitted efficiencies outside (0, 1]: fp32 " in p.stderr, p.stderr
    assert devices.read_text() == written


def test_killed_run_still_renders(artifacts: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen(
        ["bash", RUN, "--dry-run", out, artifacts],
        env=env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        rows: list[dict] = []
        while time.monotonic() < deadline and proc.poll() is None:
            rows = [r for r in complete_records(out) if r["kind"] == "row"]
            if len(rows) >= 2:
                break
            time.sleep(0.2)
        assert len(rows) >= 2, "no rows before the kill"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    kept = [r for r in records(out) if r["kind"] == "row"]
    assert len(kept) >= 2 and not any(r["kind"] == "end" for r in records(out))
    # results.md was rebuilt after each row: without a render it holds every
    # row but perhaps the last (the kill may fall between its line and the
    # rebuild).
    md = (out / "results.md").read_text()
    assert "**Run cut short**" in md
    for r in kept[:-1]:
        assert f"| {r['seq']} | " in md
    # A write cut by the kill: the truncated line is ignored and said so.
    with open(out / "results.jsonl", "a") as f:
        f.write('{"kind": "row", "seq": 99, "row": "unet-o')
    (out / "results.md").unlink()
    proc2 = subprocess.run(
        [sys.executable, BENCH, "--render", out], capture_output=True, text=True, check=False
    )
    assert proc2.returncode == 0, proc2.stderr
    md = (out / "results.md").read_text()
    assert "**Run cut short**" in md
    assert "1 unreadable line(s) of results.jsonl ignored" in md
    for r in kept:
        assert f"| {r['seq']} | {r['model']} | " in md


def test_budget_skips_with_reason(artifacts: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        ["bash", RUN, "--dry-run", out, artifacts],
        env=env(tmp_path, BENCH_BUDGET_S="2", BENCH_STAGES="correctness,rolling_unet_s"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recs = records(out)
    assert [r.get("skipped") for r in recs if r["kind"] == "stage"] == [
        None,
        None,
        "not in --stages",
        "not in --stages",
    ]
    rows = [r for r in recs if r["kind"] == "row"]
    assert all(r["stage"] in ("correctness", "rolling_unet_s") for r in rows)
    skipped = [r for r in rows if r["status"] == "skipped"]
    assert skipped, "a 2 s budget fit everything"
    for r in skipped:
        known = ("the budget: ", "the correctness stage's cap", "dry run: ", "did not finish within ")
        assert r["reason"].startswith((*known, "torch.compile(mode=")), r
    assert any(r["reason"].startswith("the budget: ") for r in skipped)
    assert recs[-1]["kind"] == "end"
    md = (out / "results.md").read_text()
    assert "skipped: the budget: " in md


def test_usage_errors(artifacts: Path, tmp_path: Path) -> None:
    def run(*args: object, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", RUN, *args], env=env(tmp_path, **extra), capture_output=True, text=True, check=False
        )

    p = run()
    assert (
        p.returncode == 1 and p.stderr == "usage: benchmarks/gpu/run.sh [--dry-run] OUTDIR [ARTIFACT_DIR]\n"
    )
    p = run("--dry-run", tmp_path / "o", tmp_path / "none")
    assert p.returncode == 1
    assert p.stdout.splitlines()[-1] == (
        f"run.sh: error: {tmp_path / 'none'}/manifest.json missing: run benchmarks/gpu/prepare.sh --dry-run "
        f"on the build machine and carry {tmp_path / 'none'}"
    )
    # Artifacts of an interrupted preparation, or prepared against other
    # runtime sources: refused before the runtime is built.
    stale = tmp_path / "stale"
    stale.mkdir()
    shutil.copy(artifacts / "manifest.json", stale)
    p = run("--dry-run", tmp_path / "o", stale)
    assert p.returncode == 1 and p.stdout.splitlines()[-1] == (
        f"run.sh: error: {stale}/source.json missing (an interrupted or older prepare.sh): "
        f"run benchmarks/gpu/prepare.sh --dry-run again and carry {stale}"
    )
    source = json.loads((artifacts / "source.json").read_text())
    (stale / "source.json").write_text(json.dumps(source | {"runtime_digest": "0123456789abcdef"}))
    p = run("--dry-run", tmp_path / "o", stale)
    assert p.returncode == 1 and p.stdout.splitlines()[-1] == (
        f"run.sh: error: {stale} was prepared against other runtime sources (digest '0123456789abcdef', "
        f"here {runtime_digest()}): run benchmarks/gpu/prepare.sh --dry-run again and carry {stale}"
    )
    assert "building" not in p.stdout
    p = run("--dry-run", tmp_path / "o", artifacts, BENCH_BUDGET_S="soon")
    assert p.returncode == 1 and p.stdout.splitlines()[-1] == (
        "run.sh: error: BENCH_BUDGET_S must be a number of seconds, got 'soon'"
    )
    p = run(tmp_path / "o", artifacts, BENCH_DRY_RUN="yes")
    assert p.returncode == 1 and p.stderr == "run.sh: error: BENCH_DRY_RUN must be 0 or 1, got 'yes'\n"
    p = subprocess.run(
        [sys.executable, BENCH, "--render", tmp_path / "empty"], capture_output=True, text=True, check=False
    )
    assert p.returncode == 1
    assert p.stderr == (
        f"bench: error: {tmp_path / 'empty' / 'results.jsonl'}: no such file "
        f"(nothing was measured into {tmp_path / 'empty'})\n"
    )
    p = subprocess.run(
        [sys.executable, BENCH, "--artifacts", artifacts, "--runtime", BIN / "gpuopt-cuda-run"]
        + ["--out", tmp_path / "o2", "--stages", "unet,warmup"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2
    assert p.stderr.splitlines()[-1].endswith(
        "--stages: expected a comma-separated subset of correctness,rolling_unet_s,unet,rest, got 'unet,warmup'"
    )
    # A dry-run manifest is refused by a GPU run (before any GPU is asked for).
    p = subprocess.run(
        [sys.executable, BENCH, "--artifacts", artifacts, "--runtime", BIN / "gpuopt-cuda-run"]
        + ["--out", tmp_path / "o3"],
        capture_output=True,
        text=True,
        check=False,
        env=env(tmp_path),
    )
    assert p.returncode == 1
    assert p.stderr == (
        f"bench: error: {artifacts / 'manifest.json'}: dry-run artifacts (prepare.sh --dry-run) on a GPU run\n"
    )


def test_broken_measurement_does_not_end_the_run(artifacts: Path, tmp_path: Path) -> None:
    """A manifest row naming a model the zoo lacks breaks its measurement:
    recorded, shown, exit 1, and the rows after it are still measured."""
    art = tmp_path / "art"
    art.mkdir()
    for f in artifacts.iterdir():
        (art / f.name).symlink_to(f)
    (art / "manifest.json").unlink()
    manifest = json.loads((artifacts / "manifest.json").read_text())
    manifest[0]["model"] = "no_such_model"
    (art / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "out"
    proc = subprocess.run(
        ["bash", RUN, "--dry-run", out, art],
        env=env(tmp_path, BENCH_STAGES="correctness"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    recs = records(out)
    errors = [r for r in recs if r["kind"] == "step_error"]
    assert len(errors) == 1 and errors[0]["stage"] == "correctness"
    assert "no_such_model" in errors[0]["error"]
    rows = [r for r in recs if r["kind"] == "row"]
    assert [r["row"] for r in rows] == ROWS[1:] and all(r["status"] == "ok" for r in rows)
    md = (out / "results.md").read_text()
    assert "## Measurements that broke outside a row" in md
    assert f"- #{errors[0]['seq']} (correctness): " in md
    assert "1 measurement(s) broke outside a row" in md
