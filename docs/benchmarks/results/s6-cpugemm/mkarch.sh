#!/bin/bash
# libGpuoptCpuKernels.a of this worktree with the CMake build's flags (the build dir is busy).
set -e
cd /work/wt-cpugemm
O=/tmp/cpugemm/arch
B="-fPIC -fno-semantic-interposition -fvisibility-inlines-hidden -ffunction-sections -fdata-sections -O3 -DNDEBUG -std=gnu++17 -D_GLIBCXX_USE_CXX11_ABI=1 -Iruntime/include -Iruntime/cpu"
K="-ffp-contract=fast -fno-signed-zeros"
g++ $B $K -c runtime/cpu/CpuKernels.cpp -o $O/CpuKernels.cpp.o &
g++ $B $K -c runtime/cpu/CpuKernelsDispatch.cpp -o $O/CpuKernelsDispatch.cpp.o &
g++ $B $K -c runtime/cpu/CpuKernelsEntryPoints.cpp -o $O/CpuKernelsEntryPoints.cpp.o &
g++ $B -c runtime/cpu/ThreadPool.cpp -o $O/ThreadPool.cpp.o &
g++ $B -c runtime/cpu/Allocator.cpp -o $O/Allocator.cpp.o &
g++ $B -c runtime/cpu/MemRefCopy.cpp -o $O/MemRefCopy.cpp.o &
wait
rm -f $O/libGpuoptCpuKernels.a
ar qc $O/libGpuoptCpuKernels.a $O/ThreadPool.cpp.o $O/CpuKernels.cpp.o $O/CpuKernelsDispatch.cpp.o $O/CpuKernelsEntryPoints.cpp.o $O/Allocator.cpp.o $O/MemRefCopy.cpp.o
ranlib $O/libGpuoptCpuKernels.a
