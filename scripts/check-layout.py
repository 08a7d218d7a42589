#!/usr/bin/env python3
"""Fails if the folders under src/ include each other in a cycle (the architecture's one-way data flow)."""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
edges = {}
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith((".h", ".cpp")):
            continue
        src = os.path.relpath(os.path.join(d, f), root).split(os.sep)[0]
        for line in open(os.path.join(d, f), encoding="utf-8"):
            m = re.match(r'\s*#\s*include\s+"([^/"]+)/', line)
            if m and m.group(1) != src and os.path.isdir(os.path.join(root, m.group(1))):
                edges.setdefault(src, {}).setdefault(m.group(1), []).append(
                    os.path.relpath(os.path.join(d, f), root))

# Depth-first search for a cycle among the folders.
state, stack = {}, []
def visit(n):
    state[n] = 1
    stack.append(n)
    for m in edges.get(n, {}):
        if state.get(m) == 1:
            cyc = stack[stack.index(m):] + [m]
            detail = "; ".join(f"{a} -> {b} ({edges[a][b][0]})" for a, b in zip(cyc, cyc[1:]))
            sys.exit(f"error: src/ folders include each other in a cycle: {detail}")
        if state.get(m) is None:
            visit(m)
    stack.pop()
    state[n] = 2
for n in sorted(edges):
    if n not in state:
        visit(n)
if "-v" in sys.argv:
    for a in sorted(edges):
        print(a, "->", " ".join(sorted(edges[a])))
