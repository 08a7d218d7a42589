#!/usr/bin/env python3
"""Hostile chat templates through `brisk template`: wall time and peak RSS of each, and its error.

Each template must end in exit status 1 with a one-line error naming line and column, well within
a second and 100 MiB (the figures are printed, not asserted: tests never time things).
  python3 bench/hostile_templates.py [path/to/brisk]     (default build/brisk)
"""
import json
import os
import subprocess
import sys
import tempfile

NS = "{% set ns = namespace() %}{% set ns.me = ns %}"
CASES = {
    "namespace holding itself": NS + "{{ ns }}",
    "namespace holding itself |tojson": NS + "{{ ns | tojson }}",
    "3000 nested ( )": "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}",
    "3000 nested [ ]": "{{ " + "[" * 3000 + "]" * 3000 + " }}",
    "3000 nested { }": "{{ " + "{'a': " * 3000 + "1" + "}" * 3000 + " }}",
    "3000 nested call blocks": "{% macro m() %}{{ caller() }}{% endmacro %}"
    + "{% call m() %}" * 3000 + "{% endcall %}" * 3000,
    "10000 nested if": "{% if true %}" * 10000 + "x" + "{% endif %}" * 10000,
    "10000 nested for": "{% for i in [1] %}" * 10000 + "x" + "{% endfor %}" * 10000,
    "1 + 1 + ... (3000)": "{{ 1" + " + 1" * 3000 + " }}",
    "'a' ~ 'a' ~ ... (3000)": "{{ 'a'" + " ~ 'a'" * 3000 + " }}",
    "not not ... (3000)": "{{ " + "not " * 3000 + "true }}",
    "|upper|upper... (3000)": "{{ 'a'" + " | upper" * 3000 + " }}",
    "range(10**9) | length": "{{ range(10**9) | length }}",
    "10**6 x 10**6 loop": "{% for i in range(10**6) %}{% for j in range(10**6) %}{% endfor %}"
    "{% endfor %}",
    "list doubling": "{% set l = [1] %}{% for i in range(64) %}{% set l = l + l %}"
    "{{ l | length }}{% endfor %}",
    "namespace list doubling": "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}"
    "{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | length }}",
    "string doubling": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
    "replace explosion": "{% set ns = namespace(s='abcdefgh') %}{% for i in range(64) %}"
    "{% set ns.s = ns.s.replace('', ns.s) %}{% endfor %}",
    "indent(10**9)": "{{ 'a\nb' | indent(1000000000) }}",
    "100000-deep list": "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
    "{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}",
    "2**63 overflow": "{{ 2 ** 63 }}",
    "1 // 0": "{{ 1 // 0 }}",
    "output flood": "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(20) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{% for i in range(1000) %}{{ ns.s }}{% endfor %}",
}


def main():
    brisk = sys.argv[1] if len(sys.argv) > 1 else "build/brisk"
    worst_wall = worst_rss = 0.0
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        ctx = os.path.join(d, "ctx.json")
        with open(ctx, "w") as f:
            json.dump({"messages": [{"role": "user", "content": "Hi"}]}, f)
        print(f"{'template':36} {'exit':>4} {'wall s':>7} {'peak MiB':>9}  error")
        for name, src in CASES.items():
            tpl = os.path.join(d, "t.jinja")
            with open(tpl, "w") as f:
                f.write(src)
            # One child per case so that ru_maxrss is that case's own peak.
            probe = subprocess.run(
                [sys.executable, "-c",
                 "import resource,subprocess,sys,time;t=time.perf_counter();"
                 "p=subprocess.run(sys.argv[1:],capture_output=True,text=True,errors='replace');"
                 "w=time.perf_counter()-t;"
                 "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024;"
                 "print(p.returncode,w,r);print(p.stderr.strip())",
                 brisk, "template", "--chat-template", tpl, "--context", ctx],
                capture_output=True, text=True, errors="replace")
            head, _, err = probe.stdout.partition("\n")
            code, wall, rss = head.split()
            code, wall, rss = int(code), float(wall), float(rss)
            err = err.strip()
            one_line = "\n" not in err and "line " in err and "column " in err
            ok = code == 1 and one_line
            bad += not ok
            worst_wall, worst_rss = max(worst_wall, wall), max(worst_rss, rss)
            shown = err if len(err) < 90 else err[:87] + "..."
            print(f"{name:36} {code:>4} {wall:>7.3f} {rss:>9.1f}  {'' if ok else 'NOT CLEAN: '}{shown}")
    print(f"worst: {worst_wall:.3f} s, {worst_rss:.1f} MiB; {bad} case(s) without a clean error")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
