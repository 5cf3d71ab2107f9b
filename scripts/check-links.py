#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every relative link in the tracked Markdown files resolves (a ctest).

For each `[text](target)`, `![alt](target)` and `[label]: target` outside code, a target that
is not a URL (http:, https:, mailto:, ...) must name an existing file or folder, relative to
the Markdown file (or to the checkout for a leading /), and its #anchor, when it points into
a Markdown file, must be one of that file's headings as GitHub slugs them (lower case,
punctuation but '-' and '_' dropped, spaces to '-', a repeated heading gets -1, -2, ...) or
an explicit <a name=...>/id=... in it.

  check-links.py [--root DIR]    the *.md git tracks, or would (else every *.md)
  check-links.py --planted       prove the check catches a broken file and a broken anchor
"""
import os
import re
import subprocess
import sys
import tempfile

import checkmain

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]+(?:\([^()\s]*\)[^()\s>]*)*)>?"
                    r"(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
EXPLICIT = re.compile(r"<a\s+[^>]*(?:name|id)\s*=\s*\"([^\"]+)\"", re.I)
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def markdown_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard", "--", "*.md"],
                             capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
        if files:
            return sorted(f for f in files if os.path.exists(os.path.join(root, f)))
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", "node_modules", "build")]
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in names
                  if n.endswith(".md")]
    return sorted(found)


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code spans blanked."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path in _anchor_cache:
        return _anchor_cache[path]
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    seen = {}
    result = set(EXPLICIT.findall(text))
    fenced = False
    previous = ""
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            previous = ""
            continue
        if fenced:
            continue
        m = HEADING.match(line)
        title = m.group(2) if m else None
        if title is None and SETEXT.match(line) and previous.strip() and \
                not previous.lstrip().startswith(("|", "-", "*")):
            title = previous.strip()
        if title is not None:
            base = slug(title)
            n = seen.get(base, 0)
            seen[base] = n + 1
            result.add(base if n == 0 else f"{base}-{n}")
        previous = line
    _anchor_cache[path] = result
    return result


def check_file(root, rel):
    problems = []
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for number, line in prose_lines(text):
        targets = [m.group(1) for m in INLINE.finditer(line)]
        ref = REFERENCE.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            if URL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            if file_part.startswith("/"):
                dest = os.path.join(root, file_part.lstrip("/"))
            elif file_part:
                dest = os.path.join(os.path.dirname(path), file_part)
            else:
                dest = path
            dest = os.path.normpath(dest)
            where = f"{rel}:{number}: {target}"
            if not os.path.exists(dest):
                problems.append(f"{where}: no such file {os.path.relpath(dest, root)}")
                continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor.lower() not in anchors(dest):
                    problems.append(f"{where}: no heading #{anchor} in "
                                    f"{os.path.relpath(dest, root)}")
    return problems


def check(root):
    files = markdown_files(root)
    problems = []
    for rel in files:
        problems += check_file(root, rel)
    for p in problems:
        print(f"check-links: {p}", file=sys.stderr)
    print(f"check-links: {len(problems)} broken links in {len(files)} Markdown files")
    return 1 if problems else 0


def planted():
    """The check must pass a good tree and catch a missing file and a missing anchor."""
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "docs"))
        with open(os.path.join(tmp, "docs", "A.md"), "w") as f:
            f.write("# A title\n\n## The `max_body_bytes` key (bytes)\n\n## Again\n\n## Again\n")

        def verdict(readme):
            with open(os.path.join(tmp, "README.md"), "w") as f:
                f.write(readme)
            _anchor_cache.clear()
            return check_file(tmp, "README.md")
        good = verdict("[a](docs/A.md#the-max_body_bytes-key-bytes) [b](docs/A.md#again-1)\n"
                       "[c](#top) [d](https://example.org/x#y)\n\n# Top\n\n```\n[e](nope.md)\n```\n")
        no_file = verdict("[a](docs/B.md)\n")
        no_anchor = verdict("[a](docs/A.md#again-2)\n")
    ok = not good and len(no_file) == 1 and len(no_anchor) == 1
    print(f"check-links --planted: good tree {'passed' if not good else good}, missing file "
          f"{'caught' if no_file else 'MISSED'}, missing anchor "
          f"{'caught' if no_anchor else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    checkmain.run(__doc__, check, planted)
