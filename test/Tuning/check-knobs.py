"""Checks that what derives from Tuning.td lists every knob of the table.

  check-knobs.py KNOBS_JSON OPT_HELP RUN_HELP COMPILE_HELP

KNOBS_JSON is scripts/tuning-gen.py's knobs.json; the others are the --help
of attn-opt, attn-run and attn-compile. Each knob of a pipeline must be an
option of that pipeline (attn-lower-cpu; attn-lower-gpu) whose help ends in
the table's defaults; each knob the tools take must be a flag of both tools,
with the pipeline's defaults in attn-run's help and a library's in
attn-compile's; and no tool may have a flag beyond the table's and its own.
Prints one line per problem and exits 1 if there is any.
"""

import json
import re
import sys

# The tools' own flags: what they run, not how the code is tuned.
TOOL_FLAGS = {
    "attn-run": {"entry", "sdpa", "target", "chip", "seed", "inputs", "dump",
                 "check", "bench", "json", "dims", "peak", "grad",
                 "ref-limit-gflop", "naive-limit-gib", "guard-pages",
                 "huge-pages", "threads"},
    "attn-compile": {"sdpa", "name", "entry", "target", "lowering", "chip",
                     "cpu", "cuda-toolkit", "o", "print-knobs", "emit",
                     "nvdisasm"},
}
GENERIC = {"help", "help-list", "version"}
PIPELINES = {"cpu": "attn-lower-cpu", "cuda": "attn-lower-gpu"}


def options_of(help_text):
    """{flag: description} of the lines `  --flag[=<v>] - description`."""
    out = {}
    for line in help_text.splitlines():
        m = re.match(r"\s*-{1,2}([a-z0-9-]+)(?:[= ]<[^>]*>)?\s+- (.*)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def pipeline_options(help_text, pipeline):
    """The options listed under `--<pipeline>` in attn-opt --help."""
    lines = help_text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)--" + re.escape(pipeline) + r"\s", line)
        if not m:
            continue
        indent = len(m.group(1))
        body = []
        for nested in lines[i + 1:]:
            if nested.lstrip().startswith("="):
                continue  # an enum option's values, printed further left
            if len(nested) - len(nested.lstrip()) <= indent:
                break
            body.append(nested)
        return options_of("\n".join(body))
    return None


def main():
    knobs_path, opt_path, run_path, compile_path = sys.argv[1:5]
    with open(knobs_path) as f:
        table = json.load(f)
    with open(opt_path) as f:
        opt_help = f.read()
    tools = {}
    for tool, path in (("attn-run", run_path), ("attn-compile", compile_path)):
        with open(path) as f:
            tools[tool] = options_of(f.read())
    problems = []
    pipelines = {t: pipeline_options(opt_help, p) for t, p in PIPELINES.items()}
    for target, options in pipelines.items():
        if options is None:
            problems.append(f"attn-opt --help has no {PIPELINES[target]}")
    table_flags = set()
    for knob in table["knobs"]:
        flag, target = knob["flag"], knob["target"]
        options = pipelines.get(target) or {}
        want = f"(default: {knob['defaults']})"
        if flag not in options:
            problems.append(f"{PIPELINES[target]} has no option {flag}")
        elif not options[flag].endswith(want):
            problems.append(f"{PIPELINES[target]}'s {flag} does not end in "
                            f"{want}: {options[flag]}")
        if not knob["tool"]:
            continue
        table_flags.add(flag)
        for tool, defaults in (("attn-run", knob["defaults"]),
                               ("attn-compile", knob["library_defaults"])):
            want = f"{target}: {knob['help']} (default: {defaults})"
            if flag not in tools[tool]:
                problems.append(f"{tool} has no flag --{flag}")
            elif want not in tools[tool][flag]:
                problems.append(f"{tool}'s --{flag} does not say {want!r}: "
                                f"{tools[tool][flag]}")
    for tool, flags in tools.items():
        for flag in sorted(set(flags) - table_flags - TOOL_FLAGS[tool]
                           - GENERIC):
            problems.append(f"{tool} has a flag --{flag} that is neither "
                            f"Tuning.td's nor one of its own")
    for problem in problems:
        print(f"check-knobs: {problem}")
    print(f"check-knobs: {len(table['knobs'])} knobs, "
          f"{len(table_flags)} tool flags, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
