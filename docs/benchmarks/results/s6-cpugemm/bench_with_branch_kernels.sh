#!/bin/bash
# gpuopt.bench with main's tools (compiler code unchanged on this branch) linking this branch's
# kernels archive: /work/main/build/lib/libGpuoptCpuKernels.a is bind-mounted, in a private mount
# namespace of this command only, from /tmp/cpugemm/arch/libGpuoptCpuKernels.a.
# usage: bench.sh NAME MODEL [extra args...]   (env KERNELS=main: no bind, main's kernels)
name=$1; model=$2; shift 2
cd /work/wt-cpugemm
out=docs/benchmarks/results/s6-cpugemm/$name.json
cmd="uptime; date -u; PYTHONPATH=$PWD/python GPUOPT_BUILD_DIR=/work/main/build timeout 1500 .venv/bin/python -m gpuopt.bench --model zoo:$model --input-shape 1,3,224,224 --rows eager,ort,full,gpuopt.compile --threads 2 --runs 10 --json $out $*; uptime"
if [ "$KERNELS" = main ]; then bash -c "$cmd"; else
unshare -m --propagation private bash -c "mount --bind /tmp/cpugemm/arch/libGpuoptCpuKernels.a /work/main/build/lib/libGpuoptCpuKernels.a && $cmd"; fi
