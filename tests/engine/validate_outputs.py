#!/usr/bin/env python3
"""Checks generated texts against the constraints they were generated under, independently of
brisk: JSON Schemas with python3-jsonschema (formats included), regular expressions with Python's
re, choices by membership. Input: JSONL lines {"kind", "text", and "schema" | "pattern" |
"choices"}. Exit status 1 if any text is invalid or there are none."""
import json
import re
import sys

import jsonschema


def check(c):
    kind, text = c["kind"], c["text"]
    if kind in ("json", "json_object", "json_schema"):
        value = json.loads(text)
        if kind == "json_object" and not isinstance(value, dict):
            raise ValueError("not an object")
        if kind == "json_schema":
            # The schema's own draft's formats: a bare FormatChecker() mixes in draft 3's, whose
            # "time" is HH:MM:SS only.
            cls = jsonschema.validators.validator_for(c["schema"])
            checker = getattr(cls, "FORMAT_CHECKER", None) or jsonschema.FormatChecker()
            cls(c["schema"], format_checker=checker).validate(value)
    elif kind == "regex":
        if not re.fullmatch(c["pattern"], text, re.S):
            raise ValueError("does not match " + c["pattern"])
    elif kind == "choice":
        if text not in c["choices"]:
            raise ValueError("not one of the choices")
    else:
        raise ValueError("unknown kind " + kind)


def main():
    n = bad = 0
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            n += 1
            try:
                check(c)
            except Exception as e:  # any failure is an invalid output
                bad += 1
                print(f"invalid ({c['kind']}): {c['text']!r}: {e}".replace("\n", " ")[:400])
    print(f"{n} outputs checked, {bad} invalid")
    sys.exit(1 if bad or n == 0 else 0)


if __name__ == "__main__":
    main()
