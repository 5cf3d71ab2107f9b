#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The daemon's layer rule (docs/ARCHITECTURE.md), checked.

Reads every #include "folder/..." in daemon/, maps it to the daemon folder it names, and
fails when a folder includes one it may not, when the folder graph has a cycle, or when a
daemon source is over the line limit. Prints the folder -> folders graph either way.

  scripts/check-layers.py [--root SOURCE_DIR] [--max-lines N]
  scripts/check-layers.py --planted   # plants a violation in a copy: must fail, or this fails
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Who may include whom. A folder not named as a key is unknown and fails the check, so a new
# folder has to take its place in the rule (and in docs/ARCHITECTURE.md) first.
ALLOWED = {
    "app": {"net", "http", "routing", "forward", "upstream", "discovery", "config", "body",
            "aggregate", "observe", "wire"},
    "routing": {"forward", "http", "upstream", "discovery", "body", "config", "observe", "wire"},
    "forward": {"http", "upstream", "aggregate", "net", "observe", "wire"},
    "discovery": {"config", "upstream", "observe", "wire"},
    "http": {"body", "net", "wire", "observe"},
    "upstream": {"net", "wire", "observe"},
    "net": {"observe", "wire"},
    "config": set(),
    "body": {"wire"},
    "aggregate": set(),
    "observe": set(),
    "wire": set(),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    """daemon/http/x.cpp -> http; daemon/main.cpp -> app (the program's entry)."""
    parts = path.split(os.sep)
    return parts[0] if len(parts) > 1 else "app"


def check(root, max_lines):
    daemon = os.path.join(root, "daemon")
    folders = set(ALLOWED)
    edges = {}
    problems = []
    for dirpath, _, files in os.walk(daemon):
        for name in sorted(files):
            if not name.endswith((".cpp", ".h")):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, daemon)
            src = folder_of(rel)
            if src not in folders:
                problems.append(f"{rel}: folder '{src}' has no place in the layer rule")
                continue
            with open(full, encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
            if len(lines) > max_lines:
                problems.append(f"{rel}: {len(lines)} lines (limit {max_lines}): split it by concern")
            for number, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m or "/" not in m.group(1):
                    continue  # same folder, or shared/ (included by bare name)
                dst = m.group(1).split("/")[0]
                if dst not in folders or dst == src:
                    continue
                edges.setdefault(src, set()).add(dst)
                if dst not in ALLOWED[src]:
                    problems.append(f"{rel}:{number}: {src} may not include {dst} "
                                    f"({m.group(1)})")
    print("daemon include graph (folder -> folders):")
    for src in sorted(folders):
        print(f"  {src:10} -> {' '.join(sorted(edges.get(src, ()))) or '(nothing)'}")
    cycle = find_cycle(edges)
    if cycle:
        problems.append("include cycle: " + " -> ".join(cycle))
    else:
        print("no cycle")
    for p in problems:
        print("check-layers: " + p, file=sys.stderr)
    return 1 if problems else 0


def find_cycle(edges):
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else path + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def planted(root, max_lines):
    """The check must catch a lower layer including a higher one: plant one in a copy."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "daemon"), os.path.join(tmp, "daemon"))
        victim = os.path.join(tmp, "daemon", "net", "directwrite.h")
        with open(victim, "a", encoding="utf-8") as f:
            f.write('#include "routing/routetable.h"\n')
        result = subprocess.run([sys.executable, __file__, "--root", tmp,
                                 "--max-lines", str(max_lines)],
                                capture_output=True, text=True)
        sys.stdout.write(result.stdout)
        sys.stdout.write(result.stderr)
        if result.returncode == 0 or "net may not include routing" not in result.stderr:
            print("check-layers: the planted violation was NOT caught", file=sys.stderr)
            return 1
        print("planted violation caught, as it must be")
        return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--max-lines", type=int, default=500)
    parser.add_argument("--planted", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    return planted(root, args.max_lines) if args.planted else check(root, args.max_lines)


if __name__ == "__main__":
    sys.exit(main())
