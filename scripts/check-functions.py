#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""No function of the daemon, shared/ or slp-monitor over the line limit (brace to brace).

A function longer than a screenful is a function doing several things; the request path is
meant to be read in one sitting (CONTRIBUTING.md). Reads every .cpp/.h under daemon/, shared/
and monitor/ with comments, strings, preprocessor lines and Qt's declaration macros that end
without a ';' (Q_LOGGING_CATEGORY(...)) blanked, walks the braces, and measures each block
opened at namespace or class scope whose head has a parameter list. Lambdas and nested blocks
count toward the function that holds them. Prints every function over the limit and fails
when there is one.

  scripts/check-functions.py [--root SOURCE_DIR] [--max-lines N]
  scripts/check-functions.py --planted   # plants a long function in a copy: must fail, or this fails
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

FOLDERS = ('daemon', 'shared', 'monitor')
SCOPE_HEAD = re.compile(r'^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b', re.S)


def blank(src):
    """Comments, string and char literals and preprocessor lines become spaces; newlines stay."""
    def spaces(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                         r"'(?:\\.|[^'\\\n])*'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*|"
                         r'^[ \t]*Q_(?:DECLARE_)?LOGGING_CATEGORY\([^;{}]*?\)[ \t]*$', re.S | re.M)
    return pattern.sub(spaces, src)


def functions(text):
    """(first line, last line, head) of each function body in `text` (already blanked)."""
    out = []
    stack = []  # kinds of the open blocks: 'scope', 'function', 'inner'
    line = 1
    head_start = 0
    for i, ch in enumerate(text):
        if ch == '\n':
            line += 1
        elif ch in ';':
            if not stack or stack[-1] == 'scope':
                head_start = i + 1
        elif ch == '{':
            head = text[head_start:i]
            if stack and stack[-1] != 'scope':
                stack.append('inner')
            elif SCOPE_HEAD.match(head) or '(' not in head or re.search(r'=\s*$', head):
                stack.append('scope' if SCOPE_HEAD.match(head) else 'inner')
            else:
                stack.append(('function', line, ' '.join(head.split())[-90:]))
            head_start = i + 1
        elif ch == '}':
            if stack:
                kind = stack.pop()
                if isinstance(kind, tuple):
                    out.append((kind[1], line, kind[2]))
            if not stack or stack[-1] == 'scope':
                head_start = i + 1
    return out


def check(root, max_lines):
    over = []
    for top in FOLDERS:
        over += check_folder(root, os.path.join(root, top), max_lines)
    for length, path, first, head in sorted(over, reverse=True):
        print(f'{path}:{first}: {length} lines (limit {max_lines}): {head}')
    return over


def check_folder(root, top, max_lines):
    over = []
    for folder, _, files in os.walk(top):
        for name in sorted(files):
            if not name.endswith(('.cpp', '.h')):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding='utf-8', errors='replace') as f:
                text = blank(f.read())
            for first, last, head in functions(text):
                length = last - first + 1
                if length > max_lines:
                    over.append((length, os.path.relpath(path, root), first, head))
    return over


def planted(root, max_lines):
    """The check must catch a function one line over the limit planted in each folder it
    covers, behind a Q_LOGGING_CATEGORY line (which ends without a ';')."""
    body = ''.join(f'    total += {n};\n' for n in range(max_lines - 1))
    text = (f'Q_LOGGING_CATEGORY(lcPlanted, "slp.planted")\n'
            f'namespace {{\nint planted(int total)\n{{\n{body}}}\n}} // namespace\n')
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'src')
        for top in FOLDERS:
            shutil.copytree(os.path.join(root, top), os.path.join(copy, top))
            with open(os.path.join(copy, top, 'planted.cpp'), 'w') as f:
                f.write(text)
        found = [o for o in check(copy, max_lines) if o[1].endswith('planted.cpp')]
    if sorted(o[1].split(os.sep)[0] for o in found) != sorted(FOLDERS) or any(
            o[0] != max_lines + 1 for o in found):
        print('FAIL: the planted functions of', max_lines + 1, 'lines were not all reported')
        return 1
    print(f'ok: the planted function was caught in each of {", ".join(FOLDERS)}')
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'))
    parser.add_argument('--max-lines', type=int, default=60)
    parser.add_argument('--planted', action='store_true')
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    if args.planted:
        return planted(root, args.max_lines)
    over = check(root, args.max_lines)
    if over:
        print(f'FAIL: {len(over)} function(s) over {args.max_lines} lines; split by step')
        return 1
    print(f'ok: no function over {args.max_lines} lines in {", ".join(FOLDERS)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
