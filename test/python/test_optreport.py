"""The op-count report: rolls vanish, the numbers come from the real passes."""

from __future__ import annotations

import re

from gpuopt.optreport import report


def test_unext_report_counts() -> None:
    text = report("unext", 64)
    row = re.search(r"^\s+roll\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", text, re.MULTILINE)
    assert row, text
    assert [int(v) for v in row.groups()] == [40, 0, 0, 0]
    assert "fuse-roll: 40 seg.roll removed, 8 shifts fused, 0 seg.channel_shift left" in text
    assert "fuse-conv-bn-relu: 7 batch_norm folded" in text
