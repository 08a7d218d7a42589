#!/usr/bin/env python3
"""Fails unless every include between src/ folders follows the architecture's folder order.

A folder includes only folders of earlier levels (data flows one way, so there are no cycles), and
ops/ includes core/ and quant/ (the block layouts it reads) alone, so the kernels can be built and
tested over plain memory. -v prints the edges found.
"""
import os
import re
import sys

# Each level may include the levels before it, never its own level or a later one.
LEVELS = [
    ["core"],
    ["kv", "tokenizer", "parallel"],
    ["quant"],
    ["ops"],
    ["formats"],
    ["grammar", "model"],
    ["chat", "engine"],
    ["server"],
    ["cli"],
]
# Folders held to fewer edges than their level allows.
NARROWER = {"ops": {"core", "quant"}}

level = {f: i for i, names in enumerate(LEVELS) for f in names}
allowed = {f: {g for g in level if level[g] < level[f]} for f in level}
for f, only in NARROWER.items():
    allowed[f] &= only

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
edges, errors = {}, []
for d, _, files in os.walk(root):
    for f in sorted(files):
        if not f.endswith((".h", ".cpp")):
            continue
        path = os.path.relpath(os.path.join(d, f), root)
        src = path.split(os.sep)[0]
        if src not in level:
            errors.append(f"src/{path}: folder '{src}' is not in scripts/check-layout.py's LEVELS")
            continue
        for n, line in enumerate(open(os.path.join(d, f), encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s+"([^/"]+)/', line)
            if not m or m.group(1) == src or not os.path.isdir(os.path.join(root, m.group(1))):
                continue
            dst = m.group(1)
            edges.setdefault(src, set()).add(dst)
            if dst not in allowed[src]:
                errors.append(f"src/{path}:{n}: {src}/ may not include {dst}/ "
                              f"({src} may include: {', '.join(sorted(allowed[src])) or 'nothing'})")
if "-v" in sys.argv:
    for a in sorted(edges):
        print(a, "->", " ".join(sorted(edges[a])))
if errors:
    sys.exit("error: the src/ folder order is broken:\n  " + "\n  ".join(errors))
