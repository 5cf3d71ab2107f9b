#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every C++ source and header of the project carries its license line (a ctest)."""
import os
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
LINE = "SPDX-License-Identifier: GPL-3.0-or-later"
missing = []
for top in ("daemon", "monitor", "shared", "tests", "fuzz", "bench"):
    for dirpath, dirnames, files in os.walk(os.path.join(ROOT, top)):
        dirnames[:] = [d for d in dirnames if d != "node_modules"]
        for name in files:
            if name.endswith((".cpp", ".h")):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    head = "".join(f.readline() for _ in range(3))
                if LINE not in head:
                    missing.append(os.path.relpath(path, ROOT))
for path in missing:
    print(f"check-spdx: {path}: no '{LINE}' in its first lines", file=sys.stderr)
print(f"check-spdx: {len(missing)} files without the license line")
sys.exit(1 if missing else 0)
