#!/usr/bin/env python3
"""Renders the chat-template fixtures with Python's Jinja2 as transformers' apply_chat_template
sets it up (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, its tojson,
raise_exception and strftime_now), which is what transformers and vLLM render with.

snippets.json holds one construct each (a test, a filter, a loop) with its context; they render
to expected/snippets.json. Each template whose templates.json entry has "reference": "jinja2" is rendered for every
conversation in conversations.json, with add_generation_prompt true and false, after the same
normalisation brisk's front door applies (as vLLM does): a null or missing content becomes "",
a tool call's arguments sent as JSON text are parsed, and text parts are joined by "\\n" for a
template that reads content as a string.

  python3 render_jinja2.py          write expected/<template>.json
  python3 render_jinja2.py --check  compare with the files there (exit 1 on any difference)
"""
import json
import sys
from datetime import datetime
from pathlib import Path

import jinja2
import jinja2.ext
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = Path(__file__).resolve().parent


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    # Templates that print today's date get a fixed one.
    env.globals["strftime_now"] = lambda fmt: datetime(2024, 7, 26).strftime(fmt)
    return env


def normalise(messages, content_format):
    out = []
    for m in messages:
        m = dict(m)
        if m.get("content") is None:
            m["content"] = ""
        if isinstance(m["content"], list) and content_format != "openai":
            m["content"] = "\n".join(p["text"] for p in m["content"])
        if m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                c = dict(c, function=dict(c["function"]))
                args = c["function"].get("arguments")
                if isinstance(args, str):
                    try:
                        parsed = json.loads(args)
                        if isinstance(parsed, dict):
                            c["function"]["arguments"] = parsed
                    except ValueError:
                        pass
                calls.append(c)
            m["tool_calls"] = calls
        out.append(m)
    return out


def render_all(name, info, conversations, env):
    template = env.from_string((HERE / "templates" / f"{name}.jinja").read_text())
    cases = []
    for conv in conversations:
        for add_generation_prompt in (True, False):
            context = {
                "messages": normalise(conv["messages"], info["content_format"]),
                "add_generation_prompt": add_generation_prompt,
                "bos_token": info["bos_token"],
                "eos_token": info["eos_token"],
                "date_string": "26 Jul 2024",
            }
            if "tools" in conv:
                context["tools"] = conv["tools"]
            case = {"conversation": conv["name"], "add_generation_prompt": add_generation_prompt}
            try:
                case["output"] = template.render(**context)
            except Exception as e:  # the template's own raise_exception, or a Python error
                case["error"] = str(e)
            cases.append(case)
    return cases


def main():
    check = "--check" in sys.argv[1:]
    manifest = json.loads((HERE / "templates.json").read_text())
    conversations = json.loads((HERE / "conversations.json").read_text())
    env = environment()
    differ = 0

    def emit(label, cases, path):
        """Writes the renderings to path, or with --check compares them with it."""
        nonlocal differ
        text = json.dumps(cases, indent=1, ensure_ascii=False) + "\n"
        if check:
            if not path.exists() or path.read_text() != text:
                print(f"{label}: Jinja2 {jinja2.__version__} renders differently from {path}")
                differ += 1
        else:
            path.write_text(text)
            print(f"{label}: {len(cases)} renderings")

    for name, info in manifest.items():
        if info.get("reference") == "jinja2":
            emit(name, render_all(name, info, conversations, env),
                 HERE / "expected" / f"{name}.json")
    # Snippets: one construct each, rendered with their own context.
    cases = []
    for snip in json.loads((HERE / "snippets.json").read_text()):
        case = {"name": snip["name"]}
        try:
            case["output"] = env.from_string(snip["template"]).render(**snip["context"])
        except Exception as e:
            case["error"] = str(e)
        cases.append(case)
    emit("snippets", cases, HERE / "expected" / "snippets.json")
    if check:
        print(f"{'differences in ' + str(differ) if differ else 'no differences in'} "
              f"the Jinja2-rendered fixtures (Jinja2 {jinja2.__version__})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
