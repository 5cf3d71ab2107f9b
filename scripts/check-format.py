#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every tracked C++ file is as clang-format (the root .clang-format) writes it.

  check-format.py [--root DIR]   clang-format --dry-run -Werror over git's *.cpp and *.h
  check-format.py --planted      proves the check fails on a misformatted file
Exits 77 (skipped, and says why) where git or clang-format is missing or DIR is no checkout.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import checkmain

SKIP = 77


def misformatted(root, files):
    """The files clang-format would change, each with its first complaint."""
    found = []
    for start in range(0, len(files), 200):  # bounded command lines
        batch = files[start:start + 200]
        run = subprocess.run(["clang-format", "--dry-run", "-Werror", *batch], cwd=root,
                             capture_output=True, text=True)
        for line in run.stderr.splitlines():
            if ": error:" in line:
                path = line.split(":", 1)[0]
                if not any(path == f for f, _ in found):
                    found.append((path, line))
    return found


def tools_missing(root):
    for tool in ("git", "clang-format"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if subprocess.run(["git", "rev-parse"], cwd=root, capture_output=True).returncode != 0:
        return f"{root} is not a git checkout"
    return None


def check(root):
    why = tools_missing(root)
    if why:
        print(f"check-format: SKIP: {why}")
        return SKIP
    files = subprocess.run(["git", "ls-files", "*.cpp", "*.h"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split()
    bad = misformatted(root, files)
    for path, line in bad:
        print(f"check-format: {line}", file=sys.stderr)
    print(f"check-format: {len(bad)} of {len(files)} C++ files not clang-format clean"
          + (" (run clang-format -i on them)" if bad else ""))
    return 1 if bad else 0


def planted():
    why = tools_missing(os.path.join(os.path.dirname(__file__), ".."))
    if why:
        print(f"check-format: SKIP: {why}")
        return SKIP
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(here, ".clang-format"), tmp)
        with open(os.path.join(tmp, "planted.cpp"), "w") as f:
            f.write("int   planted( int a ){return a;}\n")
        subprocess.run(["git", "init", "-q"], cwd=tmp, check=True)
        subprocess.run(["git", "add", "."], cwd=tmp, check=True)
        if check(tmp) != 1:
            print("check-format: the planted misformatted file was not caught", file=sys.stderr)
            return 1
    print("check-format: planted misformatted file caught")
    return 0


if __name__ == "__main__":
    checkmain.run(__doc__, check, planted)
