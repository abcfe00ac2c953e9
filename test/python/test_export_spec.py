"""SPECs naming a package: Pytorch-UNet's layout, exported as it is.

The package of spec_package.py (``unet/__init__.py`` re-exporting with a
relative import, ``unet_model.py`` star-importing ``unet_parts.py``
relatively) is exported through every SPEC form: the directory, its
``__init__.py``, a module in it, the dotted names with ``--path``, and the
bare name from the project directory on the real command line. Every failure
in the user's code is one line naming the file and line, exit status 1, and
``--traceback`` adds the traceback. Most cases run the command line's
``main`` in process (a subprocess per case would spend seconds importing
torch); the user's own invocation runs as a real ``python -m gpuopt.export``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors.numpy import load_file
from spec_package import UNET_OPS, line_of, write_unet_package

from gpuopt.export import ExportError, load_spec
from gpuopt.export import main as export_main
from gpuopt.optreport import op_counts

SHAPE = "1,3,16,16"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path/proj/unet/``, with ``proj`` the working directory."""
    proj = tmp_path / "proj"
    write_unet_package(proj)
    monkeypatch.chdir(proj)
    return proj


def _export(spec: str, out: Path, *extra: str, shape: str = SHAPE) -> int:
    out.mkdir(parents=True, exist_ok=True)
    args = [spec, "-o", str(out / "m.mlir"), "--weights", str(out / "m.safetensors"), "--input-shape", shape]
    return export_main([*args, "-q", *extra])


def _body(mlir: Path) -> str:
    """The graph without the header comment (which names the SPEC)."""
    return "\n".join(line for line in mlir.read_text().splitlines() if not line.startswith("// Exported"))


FORMS = [
    ("{proj}/unet:UNet", []),
    ("./unet:UNet", []),
    ("{proj}/unet/__init__.py:UNet", []),
    ("unet/unet_model.py:UNet", []),
    ("unet:UNet", ["--path", "{proj}"]),
    ("unet.unet_model:UNet", ["--path", "{proj}"]),
]


@pytest.mark.parametrize("form, extra", FORMS, ids=[f for f, _ in FORMS])
def test_every_spec_form_exports_the_package(
    form: str, extra: list[str], project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _export(f"{project}/unet:UNet", tmp_path / "ref") == 0, capsys.readouterr().err
    spec = form.format(proj=project)
    assert _export(spec, tmp_path / "out", *[e.format(proj=project) for e in extra]) == 0, (
        capsys.readouterr().err
    )
    mlir = tmp_path / "out" / "m.mlir"
    assert f"from {spec} with" in mlir.read_text()
    assert {op: n for op, n in op_counts(mlir.read_text()).items() if op != "param"} == UNET_OPS
    # The ops carry the lines of the package's own files.
    assert f'loc("{project / "unet" / "unet_parts.py"}":' in mlir.read_text()
    assert _body(mlir) == _body(tmp_path / "ref" / "m.mlir")
    ref = load_file(tmp_path / "ref" / "m.safetensors")
    got = load_file(tmp_path / "out" / "m.safetensors")
    assert sorted(got) == sorted(ref) and all((got[k] == ref[k]).all() for k in ref)


def test_module_importing_its_package_by_name(project: Path, tmp_path: Path) -> None:
    """unet/heads.py imports `unet.unet_parts` absolutely: the package is imported under its own name."""
    assert _export("unet/heads.py:seg_head", tmp_path / "out", shape="1,4,8,8") == 0
    assert op_counts((tmp_path / "out" / "m.mlir").read_text())["conv2d"] == 1


def test_bare_package_name_from_the_project_directory(project: Path, tmp_path: Path) -> None:
    """The user's invocation: `python -m gpuopt.export unet:UNet` in the checkout (its directory is on sys.path)."""
    proc = subprocess.run(
        [sys.executable, "-m", "gpuopt.export", "unet:UNet", "-o", str(tmp_path / "m.mlir")]
        + ["--weights", str(tmp_path / "m.safetensors"), "--input-shape", SHAPE, "-q"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert op_counts((tmp_path / "m.mlir").read_text())["conv2d"] == UNET_OPS["conv2d"]


def test_two_packages_of_one_name_in_one_process(tmp_path: Path) -> None:
    """A second `unet` elsewhere is imported afresh, not taken from sys.modules; so are the
    modules a failed load left behind (here unet.unet_parts, imported before unet_model failed)."""
    broken = write_unet_package(tmp_path / "broken")
    model_py = broken / "unet_model.py"
    model_py.write_text(model_py.read_text() + "\nraise RuntimeError('half-way')\n")
    with pytest.raises(ExportError, match="RuntimeError: half-way"):
        load_spec(f"{broken}:UNet", {})
    assert Path(sys.modules["unet.unet_parts"].__file__).parent == broken  # left by the failed import
    for width in (4, 6):
        package = write_unet_package(tmp_path / f"proj{width}", width=width)
        model = load_spec(f"{package}:UNet", {})
        assert model.inc.body[0].weight.shape[0] == width
        assert Path(sys.modules[type(model).__module__].__file__).parent == package
        assert Path(sys.modules[type(model.inc).__module__].__file__).parent == package


def _one_line_error(status: int, err: str, expected: str, out: Path) -> None:
    assert status == 1, err
    assert err == f"gpuopt.export: error: {expected}\n"
    assert not (out / "m.mlir").exists() and not (out / "m.safetensors").exists()


def test_syntax_error(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = project / "unet" / "unet_parts.py"
    parts.write_text(parts.read_text() + "\ndef broken(:\n    pass\n")
    with pytest.raises(SyntaxError) as python:  # Python's own message and line for this source
        compile(parts.read_text(), str(parts), "exec")
    status = _export("./unet:UNet", tmp_path / "out")
    expected = (
        f"SPEC './unet:UNet': SyntaxError: {python.value.msg} (unet/unet_parts.py:{python.value.lineno})"
    )
    _one_line_error(status, capsys.readouterr().err, expected, tmp_path / "out")


def test_import_error(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = project / "unet" / "unet_model.py"
    lines = model.read_text().splitlines()
    model.write_text("\n".join([lines[0], "import no_such_dependency_of_unet", *lines[1:]]) + "\n")
    status = _export("unet.unet_model:UNet", tmp_path / "out", "--path", str(project))
    expected = (
        "SPEC 'unet.unet_model:UNet': ModuleNotFoundError: No module named 'no_such_dependency_of_unet' "
        "(unet/unet_model.py:2)"
    )
    _one_line_error(status, capsys.readouterr().err, expected, tmp_path / "out")


def test_raising_constructor(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = _export("./unet:UNet", tmp_path / "out", "--kwargs", json.dumps({"width": 1}))
    line = line_of(project / "unet" / "unet_model.py", "# RAISE")
    expected = f"constructing ./unet:UNet: ValueError: width 1 is too small (unet/unet_model.py:{line})"
    _one_line_error(status, capsys.readouterr().err, expected, tmp_path / "out")


def test_raising_constructor_with_traceback(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = _export("./unet:UNet", tmp_path / "out", "--kwargs", '{"width": 1}', "--traceback")
    err = capsys.readouterr().err
    line = line_of(project / "unet" / "unet_model.py", "# RAISE")
    assert status == 1, err
    assert err.startswith("Traceback (most recent call last):\n"), err
    assert f'File "{project / "unet" / "unet_model.py"}", line {line}, in __init__' in err, err
    assert "ValueError: width 1 is too small\n" in err
    last = err.splitlines()[-1]
    assert last == "gpuopt.export: error: constructing ./unet:UNet: ValueError: width 1 is too small " + (
        f"(unet/unet_model.py:{line})"
    )


@pytest.mark.parametrize(
    "spec, extra, expected",
    [
        ("./unet:Missing", [], "SPEC './unet:Missing': unet/__init__.py defines no 'Missing'"),
        (
            "./unet:__version__",
            [],
            (
                "SPEC './unet:__version__': '__version__' in unet/__init__.py is a str, "
                "not an nn.Module class or a function returning one"
            ),
        ),
        (
            "unet.unet_model:Missing",
            ["--path", "."],
            "SPEC 'unet.unet_model:Missing': unet/unet_model.py defines no 'Missing'",
        ),
        (
            "no_such_package_x.models:Net",
            [],
            (
                "SPEC 'no_such_package_x.models:Net': no module named 'no_such_package_x' on sys.path; "
                "name the directory that holds it with --path DIR"
            ),
        ),
        (
            "unet.no_such_module:Net",
            ["--path", "."],
            (
                "SPEC 'unet.no_such_module:Net': no module named 'unet.no_such_module' on sys.path "
                "(nor in --path .); name the directory that holds it with --path DIR"
            ),
        ),
        ("./unet:UNet", ["--path", "nowhere"], "--path nowhere: not a directory"),
        ("./nowhere:Net", [], "SPEC './nowhere:Net': no such file ./nowhere"),
        ("./unet:Not-A-Name", [], "SPEC './unet:Not-A-Name': 'Not-A-Name' is not a Python name"),
        (
            "my-models:Net",
            [],
            (
                "SPEC 'my-models:Net': 'my-models' is neither a path (write ./my-models for one) "
                "nor a dotted module name"
            ),
        ),
    ],
)
def test_spec_errors(
    spec: str,
    extra: list[str],
    expected: str,
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _one_line_error(
        _export(spec, tmp_path / "out", *extra), capsys.readouterr().err, expected, tmp_path / "out"
    )


def test_directory_without_init_is_not_a_package(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "plain").mkdir()
    status = _export("./plain:Net", tmp_path / "out")
    expected = "SPEC './plain:Net': ./plain is a directory without __init__.py, not a package"
    _one_line_error(status, capsys.readouterr().err, expected, tmp_path / "out")


def test_package_named_like_an_imported_module(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "json").mkdir()
    (project / "json" / "__init__.py").write_text("")
    status = _export("./json:Net", tmp_path / "out")
    expected = (
        f"SPEC './json:Net': package 'json' ({project / 'json'}) has the name of a module already "
        f"imported from {json.__file__}; rename the package"
    )
    _one_line_error(status, capsys.readouterr().err, expected, tmp_path / "out")


def test_failure_in_forward_names_the_line(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five channels into a three-channel conv: PyTorch's message at the user's line."""
    status = _export("./unet:UNet", tmp_path / "out", shape="1,5,16,16")
    err = capsys.readouterr().err
    line = line_of(project / "unet" / "unet_parts.py", "# FORWARD")
    assert status == 1 and err.count("\n") == 1, err
    prefix = "gpuopt.export: error: running ./unet:UNet on input shape(s) [(1, 5, 16, 16)]"
    assert err.startswith(f"{prefix} failed: "), err
    assert err.endswith(f"(unet/unet_parts.py:{line})\n"), err


def test_spec_files_are_inputs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The module a SPEC names (a package: its __init__.py) is never an output."""
    for spec, source in (
        ("unet/unet_model.py:UNet", "unet/unet_model.py"),
        ("./unet:UNet", "unet/__init__.py"),
    ):
        before = Path(source).read_text()
        status = export_main([spec, "-o", "m.mlir", "--weights", source, "--input-shape", SHAPE, "-q"])
        assert status == 1
        assert capsys.readouterr().err == (
            f"gpuopt.export: error: --weights {source} is also the SPEC file; refusing to overwrite it\n"
        )
        assert Path(source).read_text() == before
