# SPDX-License-Identifier: GPL-3.0-or-later
"""The command line the repository checks share (check-links.py, check-test-sleeps.py).

  CHECK [--root DIR]   run check(root) on the checkout (default: the one holding scripts/)
  CHECK --planted      run planted(): prove the check catches what it is for
Exits with what the chosen function returns.
"""
import argparse
import os
import sys


def run(doc, check, planted):
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--planted", action="store_true")
    args = parser.parse_args()
    sys.exit(planted() if args.planted else check(os.path.abspath(args.root)))
