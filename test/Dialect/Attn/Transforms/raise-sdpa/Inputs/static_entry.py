#!/usr/bin/env python3
"""Gives a program with dynamic dims a static entry that attn-run can size:
renames @main to a private @main_dynamic and adds a @main whose argument and
result types have every '?' replaced by N, casting to the dynamic types
around a call. Prints the module.

    static_entry.py FILE.mlir N
"""
import re
import sys


def main():
    path, n = sys.argv[1], sys.argv[2]
    text = open(path).read()
    m = re.search(r"func\.func @main\((.*)\) -> (.*) \{\n", text)
    if not m:
        print("static_entry.py: no 'func.func @main(...) -> ... {'", file=sys.stderr)
        return 1
    args = re.findall(r"%(\w+): (tensor<[^>]*>)", m.group(1))
    results = re.findall(r"tensor<[^>]*>", m.group(2))
    static = lambda t: t.replace("?", n)
    text = text.replace("func.func @main(", "func.func private @main_dynamic(", 1)
    lines = [
        "  func.func @main(" + ", ".join(f"%a{i}: {static(t)}" for i, (_, t) in enumerate(args))
        + ") -> (" + ", ".join(static(t) for t in results) + ") {"
    ]
    for i, (_, t) in enumerate(args):
        lines.append(f"    %c{i} = tensor.cast %a{i} : {static(t)} to {t}")
    lines.append(
        "    %r:" + str(len(results)) + " = func.call @main_dynamic("
        + ", ".join(f"%c{i}" for i in range(len(args))) + ") : ("
        + ", ".join(t for _, t in args) + ") -> (" + ", ".join(results) + ")")
    for i, t in enumerate(results):
        lines.append(f"    %s{i} = tensor.cast %r#{i} : {t} to {static(t)}")
    lines.append("    return " + ", ".join(f"%s{i}" for i in range(len(results)))
                 + " : " + ", ".join(static(t) for t in results))
    lines.append("  }")
    end = text.rstrip().rfind("}")
    print(text[:end] + "\n".join(lines) + "\n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
