"""Prints the launch plan of a CUDA artifact, one line per step:
`init|run LINE KIND,KIND,...` (LINE: the source line of the launch's op;
KIND: the kind of each buffer it is passed), from `gpuopt-cuda-run --dump`
on standard input (its text is JSON once the elided image bytes, shown as
`, ... (N bytes)`, are dropped)."""

import json
import re
import sys

text = re.sub(r", \.\.\. \(\d+ bytes\)", "", sys.stdin.read())
model = json.loads(text)
assert model["program_type"] == "CudaProgram", model["program_type"]
plan = model["program"]
for phase in ("init", "run"):
    for step in plan[phase]:
        line = step["loc"].rsplit(":", 2)[1]
        kinds = ",".join(plan["buffers"][a]["kind"].lower() for a in step["args"])
        print(phase, line, kinds)
