#!/usr/bin/env python3
"""Checks a benchmark's --plot: the file parses as XML, is an SVG document, and holds each named
series with something drawn in it (bars, a line or points).
Usage: check_svg.py FILE SERIES [SERIES...]; exit status 1 on any failure."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    root = ET.parse(sys.argv[1]).getroot()
    if root.tag != NS + "svg":
        sys.exit(f"{sys.argv[1]}: not an SVG document (root {root.tag})")
    groups = {g.get("data-series"): g for g in root.iter(NS + "g") if g.get("data-series")}
    for name in sys.argv[2:]:
        g = groups.get(name)
        if g is None:
            sys.exit(f"{sys.argv[1]}: no series {name!r} (has {sorted(groups)})")
        drawn = [e for e in g if e.tag in (NS + "rect", NS + "polyline", NS + "circle")]
        if not drawn:
            sys.exit(f"{sys.argv[1]}: series {name!r} draws nothing")
    print(f"{sys.argv[1]}: {len(groups)} series, all of {sys.argv[2:]} drawn")


if __name__ == "__main__":
    main()
