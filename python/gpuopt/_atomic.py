"""Safe writing of the files a user names on a command line.

An output is written to a temporary file next to it and renamed over it only
once complete, so a failure (an exception, a full disk, Ctrl-C) leaves the old
file as it was. :func:`check_outputs` refuses, before anything is read or
written, an output that is also an input or another output.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path


class OutputPathError(ValueError):
    """An output path is also an input or another output."""


def _same(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    # Hard links (or two spellings realpath cannot equate) of one existing file.
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def check_outputs(outputs: Mapping[str, str | os.PathLike], inputs: Mapping[str, str | os.PathLike]) -> None:
    """Raises OutputPathError when an output is an input or a directory, or two outputs are one file.

    Keys are what the user typed the path as (``-o``, ``--weights``), for the message.
    """
    outs = [(label, Path(p)) for label, p in outputs.items()]
    for label, path in outs:
        if path.is_dir():
            raise OutputPathError(f"{label} {path} is a directory, not a file to write")
    for i, (label, path) in enumerate(outs):
        for other, source in inputs.items():
            if _same(path, Path(source)):
                raise OutputPathError(f"{label} {path} is also {other}; refusing to overwrite it")
        for other, path2 in outs[i + 1 :]:
            if _same(path, path2):
                raise OutputPathError(f"{label} and {other} are the same file ({path})")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yields a temporary path beside ``path``; renamed onto ``path`` if the block succeeds.

    The temporary name keeps ``path``'s suffix, as writers such as ``np.save``
    and ``savefig`` pick the format or add an extension from it. A symbolic
    link at ``path`` is kept: its target is replaced. A stream (a character
    device such as ``/dev/null`` or ``/dev/stdout``, or a FIFO) has no file to
    replace: ``path`` itself is yielded, to be written directly. Any other
    file that is not a regular one (a directory, a socket, a block device)
    is refused, as rename would fail on it or replace it.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}") from None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        yield Path(path)
        return
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(f"cannot write {path}: not a regular file ({_kind(mode)})")
    target = Path(os.path.realpath(path))
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=target.parent
        )
    except OSError as e:
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # mkstemp creates the file 0600; give it the mode the old file had, or a new file's.
        if target.exists():
            mode = target.stat().st_mode & 0o7777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        # Name the user's path, not the temporary one.
        raise OSError(e.errno, f"cannot write {path}: {e.strerror}") from e
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """``Path(path).write_text(text)``, atomically."""
    with atomic_output(path) as tmp:
        tmp.write_text(text)
