#!/usr/bin/env python3
"""Check the object code of gpuopt's CPU kernels (runtime/cpu/CpuKernels.cpp).

    utils/check_kernel_spills.py build/lib/libGpuoptCpuKernels.a [--objdump PATH]

Disassembles the archive (or object) and checks two properties:

1. **No spills in a micro-kernel's k-loop.** For every
   ``<isa>::microKernel<MR, Mode>`` (Mode: accumulate / prefetch variants)
   the loops (a backward jump and its target) that hold its multiply-adds
   must make no stack access (a memory operand on ``%rsp``/``%rbp``): the
   MR x NR tile has to live in registers. The stack references of the whole
   function (set-up and store of the accumulators) are printed too.
2. **Each target's code uses only its own extensions.** Functions of the
   ``avx2`` kernels use no AVX-512 register (zmm, xmm/ymm16-31, k mask);
   ``generic`` kernels and every function outside the per-target namespaces
   (dispatch, profile, the standard library's COMDAT copies the linker may
   share with other objects) use no VEX/EVEX instruction at all. A violation
   would be a SIGILL on a CPU without that extension.

Prints one line per micro-kernel (``avx2 microKernel<6, 0>: k-loop 27
insns, 0 stack refs (0 in the function)``) and ``FAIL ...`` lines; exit
status 1 on any failure.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys

FUNC = re.compile(r"^[0-9a-f]+ <(.*)>:$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
TARGET = re.compile(r"^([0-9a-f]+) <")
KERNEL = re.compile(r"::(avx512|avx2|generic)::microKernel<(\d+), (\d+)>")
ISA_NS = re.compile(r"::(avx512|avx2|generic)::")
STACK = re.compile(r"\(%r[sb]p")
AVX512_REG = re.compile(r"%zmm|%[xy]mm(1[6-9]|2\d|3[01])\b|%k[0-7]\b")
VEX_EXEMPT = {"verr", "verw", "vmcall", "vmlaunch", "vmresume", "vmxoff", "vmxon"}


def functions(disassembly: str) -> list[tuple[str, list[tuple[int, str, str]]]]:
    result: list[tuple[str, list[tuple[int, str, str]]]] = []
    for line in disassembly.splitlines():
        if m := FUNC.match(line):
            result.append((m.group(1), []))
        elif result and (m := INSN.match(line)):
            result[-1][1].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return result


def is_fma(mnemonic: str) -> bool:
    return mnemonic.startswith("vfmadd") or mnemonic in ("mulps", "vmulps")


def check_kernel(name: str, insns: list[tuple[int, str, str]]) -> tuple[str, bool]:
    loops = []
    for addr, mnemonic, operands in insns:
        if mnemonic.startswith("j") and (t := TARGET.match(operands)):
            target = int(t.group(1), 16)
            if target <= addr:
                body = [i for i in insns if target <= i[0] <= addr]
                if any(is_fma(m) for _, m, _ in body):
                    loops.append(body)
    # The k-loop: an innermost loop holding multiply-adds (the accumulators'
    # set-up and stores around it may touch the stack, e.g. the saved frame).
    spans = [(body[0][0], body[-1][0]) for body in loops]
    loops = [
        body
        for body, (lo, hi) in zip(loops, spans)
        if not any(lo <= a and b <= hi and (a, b) != (lo, hi) for a, b in spans)
    ]
    if not loops:
        return f"FAIL {name}: no multiply-add loop found", False
    size = max(len(body) for body in loops)
    refs = sum(1 for body in loops for _, _, ops in body if STACK.search(ops))
    total = sum(1 for _, _, ops in insns if STACK.search(ops))
    return f"k-loop {size} insns, {refs} stack refs ({total} in the function)", refs == 0


def isa_violation(isa: str | None, insns: list[tuple[int, str, str]]) -> str | None:
    for _, mnemonic, operands in insns:
        if isa == "avx512":
            return None
        if isa == "avx2":
            if AVX512_REG.search(operands):
                return f"{mnemonic} {operands}"
        elif (mnemonic.startswith("v") and mnemonic not in VEX_EXEMPT) or re.search(r"%[yz]mm", operands):
            return f"{mnemonic} {operands}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("object", help="libGpuoptCpuKernels.a or CpuKernels.cpp.o")
    parser.add_argument("--objdump", default=None)
    args = parser.parse_args()
    objdump = args.objdump or shutil.which("objdump") or shutil.which("llvm-objdump")
    if not objdump:
        print("error: no objdump or llvm-objdump on PATH", file=sys.stderr)
        return 2
    try:
        proc = subprocess.run(
            [objdump, "-d", "-C", "--no-show-raw-insn", args.object],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as e:
        print(f"error: cannot run {objdump}: {e}", file=sys.stderr)
        return 2
    if proc.returncode != 0:
        print(f"error: {objdump} failed on {args.object}: {proc.stderr.strip()}", file=sys.stderr)
        return 2
    failures = 0
    kernels = 0
    for name, insns in functions(proc.stdout):
        ns = ISA_NS.search(name)
        if bad := isa_violation(ns.group(1) if ns else None, insns):
            failures += 1
            where = f"{ns.group(1)} kernels" if ns else "code outside the per-target kernels"
            print(f"FAIL {name}: {where} use '{bad}'")
        if k := KERNEL.search(name):
            kernels += 1
            line, ok = check_kernel(name, insns)
            failures += not ok
            print(f"{'FAIL ' if not ok else ''}{k.group(1)} microKernel<{k.group(2)}, {k.group(3)}>: {line}")
    if kernels == 0:
        print(f"FAIL no microKernel<MR, Mode> function in {args.object}")
        failures += 1
    print(f"micro-kernels={kernels} failures={failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
