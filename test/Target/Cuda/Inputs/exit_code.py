"""exit_code.py N CMD...: runs CMD and succeeds only when it exits with N
(lit's `not` accepts any failure)."""

import subprocess
import sys

want = int(sys.argv[1])
rc = subprocess.run(sys.argv[2:], check=False).returncode
if rc != want:
    print(f"exit_code.py: {sys.argv[2]} exited with {rc}, expected {want}", file=sys.stderr)
sys.exit(0 if rc == want else 1)
