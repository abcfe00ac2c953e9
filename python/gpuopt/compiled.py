"""Run models compiled by ``gpuopt-compile`` from Python (ctypes, no MLIR).

Every artifact speaks the C ABI of ``runtime/include/gpuopt/Runtime/ModelAbi.h``::

    from gpuopt.compiled import CompiledModel, compile_model, set_num_threads

    so = compile_model("m.mlir", "m.so", pipeline="gpuopt-optimize")
    with CompiledModel(so, "m.safetensors") as model:
        (y,) = model.run(x)            # x: float32 array of model.input_shapes[0]

A CPU model library (``--target=cpu``, ``m.so``) implements the ABI itself and
is loaded directly. A CUDA artifact (``--target=cuda``, ``m.gpuopt``) runs
through ``libgpuopt_runtime.so`` (runtime/api/), found at
``$GPUOPT_RUNTIME_LIBRARY`` or else in the build's ``lib/`` (see
gpuopt.tools.build_dir); :class:`CompiledModel` has the same methods and
exceptions for both.

Each library carries its own thread pool; :func:`set_num_threads` sets the
thread count of every library loaded in this process, now and later.

A library is code: loading it runs its constructors, and nothing checked
afterwards makes a hostile one safe. Before ``dlopen`` the file is checked
the way ``gpuopt-run`` checks it (runtime/base/ModelLibrary.cpp, same
messages): a regular file, a complete ELF shared object of this machine, a
gpuopt model library of this ABI version. What is loaded is a private copy
of it (in TMPDIR, removed once loaded), checked the same way, so that a
library recompiled to the same path is the new code. The library then
checks its own metadata against a hash compiled into its code.
"""

from __future__ import annotations

import ctypes
import os
import platform
import stat
import struct
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from gpuopt.tools import build_dir, run_tool

if TYPE_CHECKING:
    from typing_extensions import Self

#: The version of ModelAbi.h this module speaks (GPUOPT_MODEL_ABI_VERSION).
ABI_VERSION = 3

_ERRLEN = 4096
_num_threads: int | None = None
_libraries: weakref.WeakSet[CompiledModel] = weakref.WeakSet()
_runtime: ctypes.CDLL | None = None
_runtime_lock = threading.Lock()


class CompiledModelError(RuntimeError):
    """A compiled model could not be loaded or run; the message is the library's."""


class ReaderLimits(ctypes.Structure):
    """gpuopt_model_limits: gpuopt-run's --max-header-bytes, --max-tensors and
    --max-rank, for the weights file and the library's own metadata."""

    _fields_ = [
        ("max_header_bytes", ctypes.c_uint64),
        ("max_tensors", ctypes.c_uint64),
        ("max_rank", ctypes.c_uint64),
    ]

    def __init__(
        self, max_header_bytes: int = 8 << 20, max_tensors: int = 1 << 16, max_rank: int = 8
    ) -> None:
        super().__init__(max_header_bytes, max_tensors, max_rank)


#: GPUOPT_DEVICE_EMULATE of ModelAbi.h: the CUDA emulator (device="emulate").
DEVICE_EMULATE = -1


class ModelOptions(ctypes.Structure):
    """gpuopt_model_options of ModelAbi.h (what gpuopt_model_create loads)."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("artifact_path", ctypes.c_char_p),
        ("weights_path", ctypes.c_char_p),
        ("strict", ctypes.c_int),
        ("limits", ctypes.POINTER(ReaderLimits)),
        ("device", ctypes.c_int),
    ]


# ELF machine numbers of the hosts gpuopt runs on (elf.h).
_ELF_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183}
_NOTE_SECTION = b"gpuopt_model"
_NOTE = struct.Struct("<8sIIQQ")  # gpuopt_model_note of CompiledModel.h
# The names of fileKind in runtime/base/FileIO.cpp.
_FILE_KINDS = (
    (stat.S_ISDIR, "directory"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


def _truncated(what: str, offset: int, size: int, file_size: int) -> str:
    end = f"ends at byte {offset + size}" if offset + size < 1 << 64 else "ends beyond 2^64"
    return f"truncated or corrupt: {what} {end}, the file has {file_size} bytes"


def check_library(path: str | Path, name: str | Path | None = None) -> None:
    """Raises CompiledModelError unless ``path`` is a complete gpuopt model
    library of this machine and ABI version; reads only its headers and note
    (the port of checkModelLibrary in runtime/base/ModelLibrary.cpp). Messages
    name ``name`` (default: ``path``), the file the user gave for a copy."""
    shown = path if name is None else name

    def cannot(why: str) -> CompiledModelError:
        return CompiledModelError(f"cannot load {shown}: {why}")

    def not_model(why: str) -> CompiledModelError:
        return CompiledModelError(f"{shown} is not a gpuopt model library ({why})")

    def not_regular(mode: int) -> CompiledModelError:
        kind = next((name for test, name in _FILE_KINDS if test(mode)), "special file")
        return cannot(f"not a regular file ({kind})")

    # As openRegularFile: stat first, since opening a device may act on it.
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise cannot(f"cannot open: {e.strerror or e}") from None
    if not stat.S_ISREG(mode):
        raise not_regular(mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise cannot(f"cannot open: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(st.st_mode)
        size = st.st_size

        def read_at(offset: int, n: int) -> bytes:
            f.seek(offset)
            return f.read(n)

        def inside(offset: int, n: int) -> bool:
            return offset <= size and n <= size - offset

        eh = read_at(0, 64)
        if len(eh) < 64 or eh[:4] != b"\x7fELF":
            raise cannot("not an ELF file")
        if eh[4] != 2:
            raise cannot(f"not a 64-bit ELF file (ELF class {eh[4]})")
        if eh[5] != 1:
            raise cannot("not a little-endian ELF file")
        e_type, e_machine = struct.unpack_from("<HH", eh, 16)
        (e_phoff, e_shoff) = struct.unpack_from("<QQ", eh, 32)
        e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHHHH", eh, 54)
        host = _ELF_MACHINES.get(platform.machine().lower(), -1)
        if e_machine != host:
            raise cannot(f"built for ELF machine {e_machine}, this machine is {host}")
        if e_type != 3:  # ET_DYN
            raise cannot(f"not a shared library (ELF type {e_type})")
        # dlopen maps every PT_LOAD segment; a page beyond the end of the
        # file is SIGBUS on first touch.
        if e_phnum == 0 or e_phentsize != 56:
            raise cannot("no valid program header table")
        if not inside(e_phoff, e_phnum * 56):
            raise cannot(_truncated("the program header table", e_phoff, e_phnum * 56, size))
        table = read_at(e_phoff, e_phnum * 56)
        loads = dynamic = False
        for i in range(e_phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz, p_memsz, p_align = struct.unpack_from(
                "<IIQQQQQQ", table, i * 56
            )
            dynamic |= p_type == 2  # PT_DYNAMIC
            if p_type != 1:  # PT_LOAD
                continue
            loads = True
            if not inside(p_offset, p_filesz):
                raise cannot(_truncated(f"loadable segment {i}", p_offset, p_filesz, size))
            if p_filesz > p_memsz:
                raise cannot(
                    f"corrupt loadable segment {i}: more bytes in the file ({p_filesz}) "
                    f"than in memory ({p_memsz})"
                )
            if p_align > 1 and (p_align & (p_align - 1) or p_offset % p_align != p_vaddr % p_align):
                raise cannot(
                    f"corrupt loadable segment {i}: offset {p_offset} and address {p_vaddr} "
                    f"do not fit alignment {p_align}"
                )
        if not loads or not dynamic:
            raise cannot("corrupt program headers: no loadable or no dynamic segment")
        if e_shnum == 0 or e_shentsize != 64 or e_shstrndx >= e_shnum:
            raise not_model("it has no valid section header table")
        if not inside(e_shoff, e_shnum * 64):
            raise cannot(_truncated("the section header table", e_shoff, e_shnum * 64, size))
        table = read_at(e_shoff, e_shnum * 64)
        sections = [struct.unpack_from("<IIQQQQ", table, i * 64) for i in range(e_shnum)]
        for i, (_, sh_type, _, _, sh_offset, sh_size) in enumerate(sections):
            if sh_type != 8 and not inside(sh_offset, sh_size):  # SHT_NOBITS
                raise cannot(_truncated(f"section {i}", sh_offset, sh_size, size))
        _, names_type, _, _, names_offset, names_size = sections[e_shstrndx]
        if names_type != 3 or names_size > 1 << 20:  # SHT_STRTAB
            raise not_model("bad section name table")
        names = read_at(names_offset, names_size) + b"\0"
        note = None
        for sh_name, sh_type, _, _, sh_offset, sh_size in sections:
            if sh_name < names_size and names[sh_name : names.index(b"\0", sh_name)] == _NOTE_SECTION:
                note = (sh_type, sh_offset, sh_size)
        if note is None:
            raise not_model("it has no gpuopt_model section")
        sh_type, sh_offset, sh_size = note
        raw = read_at(sh_offset, _NOTE.size) if sh_type != 8 and sh_size >= _NOTE.size else b""
        if len(raw) != _NOTE.size or raw[:8] != b"GPUOPTMD":
            raise not_model("its gpuopt_model section holds no gpuopt model note")
        abi_version = _NOTE.unpack(raw)[1]
        if abi_version != ABI_VERSION:
            raise CompiledModelError(
                f"{shown} has model ABI version {abi_version}, this runtime supports version "
                f"{ABI_VERSION}; recompile it with this gpuopt-compile"
            )


def _private_copy(so_path: str | Path) -> str:
    """A checked copy of the library ``so_path`` in a new temporary file
    (TMPDIR), for dlopen to load. glibc's dlopen returns the library already
    loaded from a path it has seen, and ctypes never unloads one: a library
    recompiled to the same path would run the old code. A private copy also
    cannot change between its check and dlopen."""
    check_library(so_path)  # A regular file of bounded layout: safe to copy.
    try:
        src = os.open(so_path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise CompiledModelError(f"cannot load {so_path}: cannot open: {e.strerror or e}") from None
    with os.fdopen(src, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise CompiledModelError(f"cannot load {so_path}: it was replaced while being loaded")
        fd, copy = tempfile.mkstemp(prefix="gpuopt-model-", suffix=".so")
        try:
            with os.fdopen(fd, "wb") as out:
                # The size checked above, even if the file grows meanwhile.
                left = st.st_size
                while left > 0 and (chunk := f.read(min(left, 1 << 20))):
                    out.write(chunk)
                    left -= len(chunk)
            check_library(copy, name=so_path)
        except BaseException:
            os.unlink(copy)
            raise
    return copy


def runtime_library() -> Path:
    """Where ``libgpuopt_runtime.so`` is looked for: ``$GPUOPT_RUNTIME_LIBRARY``
    when set, else ``lib/libgpuopt_runtime.so`` of the build directory."""
    env = os.environ.get("GPUOPT_RUNTIME_LIBRARY")
    return Path(env) if env else build_dir() / "lib" / "libgpuopt_runtime.so"


def is_cuda_artifact(path: str | Path) -> bool:
    """Whether ``path`` is a CUDA artifact of ``gpuopt-compile --target=cuda``:
    bytes 4..7 are the FlatBuffers identifier "GPOA" (runtime/api/
    ModelApi.cpp's test); a file that cannot be read, or one of another kind
    (the runtime then says what it is), counts by its ``.gpuopt`` suffix. Only a regular file is
    opened."""
    try:
        if stat.S_ISREG(os.stat(path).st_mode):
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                magic = f.read(8)
            if magic[:4] == b"\x7fELF":
                return False
            if len(magic) == 8 and magic[4:] == b"GPOA":
                return True
    except OSError:
        pass
    return str(path).endswith(".gpuopt")


def _load_runtime(artifact: str | Path) -> ctypes.CDLL:
    """libgpuopt_runtime.so, loaded once per process, for ``artifact``'s
    error messages."""
    global _runtime
    with _runtime_lock:
        if _runtime is not None:
            return _runtime
        path = runtime_library()
        if not path.is_file():
            raise CompiledModelError(
                f"{artifact} is a CUDA artifact, which runs through libgpuopt_runtime.so: {path} "
                "does not exist (build the gpuopt_runtime target or set GPUOPT_RUNTIME_LIBRARY)"
            )
        try:
            lib = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise CompiledModelError(f"cannot load {path}: {e}") from None
        try:
            _declare(lib)
        except AttributeError as e:
            raise CompiledModelError(f"{path} is not a complete gpuopt runtime library ({e})") from None
        version = lib.gpuopt_model_abi_version()
        if version != ABI_VERSION:
            raise CompiledModelError(
                f"{path} has model ABI version {version}, this module supports version {ABI_VERSION}"
            )
        _runtime = lib
        return lib


def set_num_threads(n: int) -> None:
    """Sets the kernels' thread count in every loaded compiled library and in
    those loaded later (values < 1: all cores)."""
    global _num_threads
    _num_threads = int(n)
    for model in list(_libraries):
        model._lib.gpuopt_set_num_threads(_num_threads)


def compile_model(
    mlir_path: str | Path,
    out_so: str | Path,
    pipeline: str | None = None,
    target: str = "cpu",
    cpu: str | None = None,
    cuda_flags: Sequence[str] = (),
) -> Path:
    """Runs ``gpuopt-compile`` (from the build directory, see gpuopt.tools) and
    returns the library's path; raises gpuopt.tools.ToolError on failure.
    ``cpu`` is the ``--cpu=`` level of ``--target=cpu`` (native, x86-64,
    x86-64-v2, x86-64-v3, x86-64-v4; None: gpuopt-compile's default, native):
    a library built for a level runs on every CPU of that level.
    ``cuda_flags`` are further ``--target=cuda`` flags of gpuopt-compile
    (``--cuda-arch=sm_90``, ``--gpu-conv=library``, ``--cuda-host-image``...)."""
    args: list[str | Path] = ["gpuopt-compile", mlir_path, f"--target={target}", "-o", out_so]
    if pipeline:
        args.append(f"--pipeline={pipeline}")
    if cpu is not None:
        args.append(f"--cpu={cpu}")
    if cuda_flags:
        if target != "cuda":
            raise ValueError(f"cuda_flags apply to target='cuda', not {target!r}")
        args.extend(cuda_flags)
    run_tool([str(a) for a in args])
    return Path(out_so)


def _declare(lib: ctypes.CDLL) -> None:
    """Declares the C signatures of ModelAbi.h on ``lib``."""
    p, i64p, cp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p
    signatures: dict[str, tuple[object, list[object]]] = {
        "gpuopt_model_abi_version": (ctypes.c_int, []),
        "gpuopt_model_options_init": (None, [ctypes.POINTER(ModelOptions)]),
        "gpuopt_model_create": (p, [ctypes.POINTER(ModelOptions), cp, ctypes.c_size_t]),
        "gpuopt_model_destroy": (None, [p]),
        "gpuopt_model_num_inputs": (ctypes.c_int, [p]),
        "gpuopt_model_num_outputs": (ctypes.c_int, [p]),
        "gpuopt_model_input_shape": (ctypes.c_int, [p, ctypes.c_int, i64p]),
        "gpuopt_model_output_shape": (ctypes.c_int, [p, ctypes.c_int, i64p]),
        "gpuopt_model_run": (ctypes.c_int, [p, p, p, cp, ctypes.c_size_t]),
        "gpuopt_set_num_threads": (None, [ctypes.c_int]),
        "gpuopt_get_num_threads": (ctypes.c_int, []),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


class CompiledModel:
    """A model from ``gpuopt-compile`` with its weights loaded: a CPU model
    library (``.so``) or a CUDA artifact (``.gpuopt``, through
    libgpuopt_runtime.so, on GPU ``device``, default 0; ``device="emulate"``
    runs the artifact's own launch plan and host-built kernels on the CPU,
    no GPU needed: docs/CUDABackend.md, "Emulation on the host").

    ``strict`` rejects weights files holding tensors the model does not use;
    ``weights_path`` may be None for a model library without parameters;
    ``limits`` bounds the weights file and the model's metadata (default:
    ReaderLimits()). Loading runs the model's load-time initializer once (e.g.
    BatchNorm folding); :meth:`run` is one inference. Calls from several
    threads are serialised (ctypes releases the GIL; the C side also locks).
    """

    def __init__(
        self,
        so_path: str | Path,
        weights_path: str | Path | None,
        strict: bool = False,
        limits: ReaderLimits | None = None,
        device: int | str | None = None,
    ) -> None:
        self._model: int | None = None
        self._lock = threading.Lock()
        #: "cpu" (a model library) or "cuda" (a CUDA artifact).
        self.target = "cuda" if is_cuda_artifact(so_path) else "cpu"
        options = ModelOptions()
        if self.target == "cuda":
            if isinstance(device, str):
                if device != "emulate":
                    raise ValueError(f'device must be a GPU ordinal (>= 0) or "emulate", got {device!r}')
            elif device is not None and device < 0:
                raise ValueError(f"device must be >= 0, got {device}")
            self._lib = _load_runtime(so_path)
            self._lib.gpuopt_model_options_init(ctypes.byref(options))
            options.artifact_path = str(so_path).encode()
            if device == "emulate":
                options.device = DEVICE_EMULATE
            else:
                options.device = 0 if device is None else int(device)
        else:
            if device is not None:
                raise ValueError(f"{so_path} is a CPU model library; device applies to CUDA artifacts")
            self._lib = self._load_library(so_path)
            self._lib.gpuopt_model_options_init(ctypes.byref(options))
        err = ctypes.create_string_buffer(_ERRLEN)
        limits = limits or ReaderLimits()
        options.weights_path = None if weights_path is None else str(weights_path).encode()
        options.strict = int(strict)
        options.limits = ctypes.pointer(limits)
        model = self._lib.gpuopt_model_create(ctypes.byref(options), err, _ERRLEN)
        if not model:
            raise CompiledModelError(err.value.decode(errors="replace"))
        self._model = model
        query = self._lib.gpuopt_model_input_shape
        self.input_shapes = [self._shape(query, i) for i in range(self._lib.gpuopt_model_num_inputs(model))]
        query = self._lib.gpuopt_model_output_shape
        self.output_shapes = [self._shape(query, i) for i in range(self._lib.gpuopt_model_num_outputs(model))]
        _libraries.add(self)
        if _num_threads is not None:
            self._lib.gpuopt_set_num_threads(_num_threads)

    @staticmethod
    def _load_library(so_path: str | Path) -> ctypes.CDLL:
        """A checked private copy of the model library ``so_path``, loaded."""
        copy = _private_copy(so_path)
        try:
            lib = ctypes.CDLL(copy, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise CompiledModelError(f"cannot load {so_path}: {e}") from None
        finally:
            os.unlink(copy)  # Mapped now; nothing else may load it.
        try:
            abi_version = lib.gpuopt_model_abi_version
        except AttributeError:
            raise CompiledModelError(
                f"{so_path} is not a gpuopt model library (it does not define gpuopt_model_abi_version)"
            ) from None
        abi_version.restype = ctypes.c_int
        version = abi_version()
        if version != ABI_VERSION:
            raise CompiledModelError(
                f"{so_path} has model ABI version {version}, this runtime supports version "
                f"{ABI_VERSION}; recompile it with this gpuopt-compile"
            )
        try:
            _declare(lib)
        except AttributeError as e:
            raise CompiledModelError(f"{so_path} is not a complete gpuopt model library ({e})") from None
        return lib

    @property
    def cpu_isa(self) -> str | None:
        """The instruction set this library's CPU kernels run ("avx512", "avx2",
        "generic": ``GPUOPT_CPU_ISA`` when set, else the best the CPU has);
        None for a CUDA artifact and for a library built before
        ``gpuopt_cpu_kernel_isa`` existed."""
        if self.target != "cpu":
            return None
        try:
            fn = self._lib.gpuopt_cpu_kernel_isa
        except AttributeError:
            return None
        fn.restype = ctypes.c_char_p
        fn.argtypes = []
        name = fn()
        return name.decode() if name else None

    def _shape(self, query: ctypes._CFuncPtr, index: int) -> tuple[int, ...]:
        rank = query(self._model, index, None)
        dims = (ctypes.c_int64 * max(rank, 1))()
        query(self._model, index, dims)
        return tuple(dims[:rank])

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        """One inference: float32 inputs of ``input_shapes``, outputs of ``output_shapes``."""
        if self._model is None:
            raise CompiledModelError("the model is closed")
        if len(inputs) != len(self.input_shapes):
            raise ValueError(f"the model takes {len(self.input_shapes)} input(s), got {len(inputs)}")
        arrays = []
        for i, (x, shape) in enumerate(zip(inputs, self.input_shapes, strict=True)):
            a = np.ascontiguousarray(x, dtype=np.float32)
            if a.shape != shape:
                raise ValueError(f"input {i} has shape {a.shape}, the model expects {shape}")
            arrays.append(a)
        outputs = [np.empty(shape, dtype=np.float32) for shape in self.output_shapes]
        in_ptrs = (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data for a in arrays])
        out_ptrs = (ctypes.c_void_p * max(len(outputs), 1))(*[o.ctypes.data for o in outputs])
        err = ctypes.create_string_buffer(_ERRLEN)
        with self._lock:
            if self._model is None:
                raise CompiledModelError("the model is closed")
            status = self._lib.gpuopt_model_run(self._model, in_ptrs, out_ptrs, err, _ERRLEN)
        if status:
            raise CompiledModelError(err.value.decode(errors="replace"))
        return outputs

    def close(self) -> None:
        """Frees the weights and load-time results (the library stays loaded;
        intermediate buffers stay in its per-process cache for reuse)."""
        with self._lock:
            if self._model is not None:
                self._lib.gpuopt_model_destroy(self._model)
                self._model = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_model", None) is not None:
            self.close()
