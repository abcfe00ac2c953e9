"""Prints the launch plan of a CUDA artifact, one line per step:
`init|run LINE KIND,KIND,...` (LINE: the source line of the launch's op;
KIND: the kind of each buffer it is passed)."""

import json
import struct
import sys
from pathlib import Path

data = Path(sys.argv[1]).read_bytes()
(n,) = struct.unpack("<Q", data[8:16])
header = json.loads(data[16 : 16 + n])
for phase in ("init", "run"):
    for step in header[phase]:
        line = step["loc"].rsplit(":", 2)[1]
        kinds = ",".join(header["buffers"][a]["kind"] for a in step["args"])
        print(phase, line, kinds)
