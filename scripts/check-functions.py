#!/usr/bin/env python3
"""Fails if a function outside the kernels (src/ops/) is longer than 120 lines.

Long functions hide structure; the kernels are exempt, since unrolled SIMD loops read best whole.
A function is a brace block opened at namespace or class level after a parameter list.
"""
import os
import re
import sys

LIMIT = 120
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def strip(text):
    """The source with comments, literals and preprocessor lines blanked (line breaks kept)."""
    out = re.sub(r'R"(\w*)\((?:.|\n)*?\)\1"', lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    pattern = r'//[^\n]*|/\*(?:.|\n)*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
    out = re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group(0)), out)
    return re.sub(r"(?m)^\s*#.*$", "", out)  # preprocessor lines


def long_functions(path):
    text = strip(open(path, encoding="utf-8").read())
    found, stack, head = [], [], ""  # stack: (kind, start line) of each open brace
    line = 1
    for ch in text:
        if ch == "\n":
            line += 1
        if ch == "{":
            scopes = all(k in ("namespace", "class") for k, _ in stack)
            h = head.strip()
            if re.match(r"(namespace|extern)\b", h) or (not h and not stack):
                kind = "namespace"
            elif re.match(r"(template\s*<.*>\s*)?(class|struct|union)\b", h, re.S) and "(" not in h:
                kind = "class"
            elif scopes and ")" in h and not re.search(r"\benum\b|=\s*$", h):
                kind = "function"
            else:
                kind = "block"
            stack.append((kind, line))
            head = ""
        elif ch == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "function" and line - start + 1 > LIMIT:
                    found.append((line - start + 1, start))
            head = ""
        elif ch == ";":
            head = ""
        else:
            head += ch
    return found


errors = []
for d, _, files in os.walk(root):
    for f in sorted(files):
        path = os.path.join(d, f)
        rel = os.path.relpath(path, root)
        if not f.endswith((".h", ".cpp")) or rel.startswith("ops" + os.sep):
            continue
        for n, start in long_functions(path):
            errors.append(f"src/{rel}:{start}: a function of {n} lines (at most {LIMIT} outside "
                          "src/ops/): split it into steps with names")
if errors:
    sys.exit("error: long functions:\n  " + "\n  ".join(sorted(errors)))
