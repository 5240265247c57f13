#!/usr/bin/env python3
"""Generates what derives from attn's tuning knobs (Tuning.td).

Runs `llvm-tblgen --dump-json` on include/attn/Tuning/Tuning.td (or reads
such a dump) and writes what is asked for:

  --inc Knobs.h.inc  the knob ids, the knob table behind the tools' flags
                     (lib/Tuning), the pipelines' option members
                     (Pipelines.h), the GPU chips and the defaults per CPU
                     kernel path;
  --json knobs.json  every knob of a pipeline with its flag, type, checks,
                     help and defaults, for the Python package
                     (attn.compile's keyword arguments) and the tests;
  --md tuning.md     docs/tuning.md, the knobs' reference page.

CMake writes the first two into the build (include/attn/Tuning/
CMakeLists.txt). After changing Tuning.td, regenerate the docs page:

  python3 scripts/tuning-gen.py --md docs/tuning.md

(test/Docs/tuning-doc.test fails while it is stale).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# The C++ types of Tuning.td's knobs and what the tools make of each.
CPP_INT, CPP_BOOL, CPP_STRING = "int64_t", "bool", "std::string"
CPU_KERNELS = "::mlir::attn::CpuKernels"
PIPELINES = {"cpu": "Cpu", "gpu": "Gpu"}
# The tools' and the library JSON's word for a pipeline's target.
TARGETS = {"cpu": "cpu", "gpu": "cuda"}


class GenError(Exception):
    pass


def location(record):
    """(file, line) of a record's definition, for the table's order."""
    file, _, line = record["!locs"][0].rpartition(":")
    return (file, int(line))


def defs_of(records, cls):
    names = records["!instanceof"].get(cls, [])
    return sorted((records[n] for n in names), key=location)


def c_string(text):
    """A C++ string literal of `text`."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) > 0x7e:
            raise GenError(f"non-ASCII or control character in {text!r}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def unquote_cpp(text):
    """The value a C++ default expression of Tuning.td spells, as text."""
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', text)
    if m:
        return re.sub(r"\\(.)", r"\1", m.group(1))
    return text


class Knob:
    def __init__(self, rec, records, paths):
        self.rec = rec
        self.id = rec["!name"]
        self.pipeline = rec["pipeline"]
        if self.pipeline not in ("", *PIPELINES):
            raise GenError(f"{self.id}: pipeline '{self.pipeline}' is not "
                           f"one of cpu, gpu or empty")
        self.cpp_type = rec["type"]
        self.argument = rec["pipelineArgument"]
        self.cpp_name = rec["pipelineCppName"]
        self.help = rec["description"]
        self.pipeline_default = rec["pipelineDefault"]
        self.choices = rec["choices"]
        self.tool = bool(rec["tool"])
        self.library_tuning = bool(rec["libraryTuning"])
        self.library_default = rec["libraryDefault"]
        self.library_default_why = rec["libraryDefaultWhy"]
        self.default_note = rec["defaultNote"]
        self.min, self.max = rec["min"], rec["max"]
        self.power_of_two = bool(rec["powerOfTwo"])
        self.multiple_of = rec["multipleOf"]
        self.at_its_width = bool(rec["onCpuPathAtItsWidth"])
        self.is_path_width = bool(rec["isPathWidth"])
        self.paths = paths
        on_paths = records[rec["onCpuPath"]["def"]]
        # (path record, option text) where the path's default is not the
        # knob's own.
        self.on_cpu_path = []
        for path in paths:
            value = on_paths.get(path["cppEnumerator"])
            if value is None:
                if path["spelling"] != "auto":
                    raise GenError(f"OnCpuPaths has no field for the path "
                                   f"'{path['spelling']}'")
                continue
            if value != "":
                self.on_cpu_path.append((path, value))
        if self.on_cpu_path and self.pipeline not in ("cpu", ""):
            raise GenError(f"{self.id}: defaults per CPU kernel path on a "
                           f"knob of the GPU pipelines")
        if self.cpp_type == CPP_INT:
            self.kind = "Int"
        elif self.cpp_type == CPP_BOOL:
            self.kind = "Bool"
        elif self.cpp_type in (CPP_STRING, CPU_KERNELS):
            self.kind = "Choice" if self.choices else "String"
        else:
            raise GenError(f"{self.id}: type '{self.cpp_type}' is not one "
                           f"of int64_t, bool, std::string, CpuKernels")
        if self.cpp_type == CPU_KERNELS and self.choices != [
                p["spelling"] for p in paths]:
            raise GenError(f"{self.id}: a CpuKernels knob's choices are the "
                           f"kernel paths")
        if (self.min is not None or self.max is not None
                or self.power_of_two or self.multiple_of) and self.kind != "Int":
            raise GenError(f"{self.id}: min, max, powerOfTwo and multipleOf "
                           f"are for int64_t knobs")
        if self.kind == "Int" and (self.min is None or self.max is None):
            raise GenError(f"{self.id}: an int64_t knob needs min and max "
                           f"(the passes check their options against them)")
        if self.tool and not self.pipeline:
            raise GenError(f"{self.id}: a tool's flag of no pipeline")
        for value in [self.pipeline_default] + [v for _, v in self.on_cpu_path]:
            self.check_value(self.user_text(value))
        if self.library_default:
            self.check_value(unquote_cpp(self.library_default))

    @property
    def key(self):
        """The knob's name in the library JSON and in Python."""
        return self.argument.replace("-", "_")

    def user_text(self, value):
        """A default of the table (C++) as the option's text."""
        if self.cpp_type == CPU_KERNELS:
            for path in self.paths:
                if value.endswith("::" + path["cppEnumerator"]):
                    return path["spelling"]
            raise GenError(f"{self.id}: '{value}' is no CpuKernels path")
        return unquote_cpp(value)

    def check_value(self, text):
        if self.kind == "Choice" and text not in self.choices:
            raise GenError(f"{self.id}: default '{text}' is not one of "
                           f"{self.choices}")
        if self.kind == "Bool" and text not in ("true", "false"):
            raise GenError(f"{self.id}: default '{text}' is not a bool")
        if self.kind == "Int":
            if not re.fullmatch(r"-?[0-9]+", text):
                raise GenError(f"{self.id}: default '{text}' is not an int")
            value = int(text)
            if self.min is not None and value < self.min:
                raise GenError(f"{self.id}: default {value} < min")
            if self.max is not None and value > self.max:
                raise GenError(f"{self.id}: default {value} > max")
            if self.power_of_two and value & (value - 1):
                raise GenError(f"{self.id}: default {value} is not a power "
                               f"of two")
            if self.multiple_of and value % self.multiple_of:
                raise GenError(f"{self.id}: default {value} is not a "
                               f"multiple of {self.multiple_of}")

    def defaults_text(self, library=False):
        """What the help says of the defaults, from the table."""
        if library and self.library_default:
            text = unquote_cpp(self.library_default)
            if self.library_default_why:
                text += f" ({self.library_default_why})"
            return text
        own = self.user_text(self.pipeline_default)
        if own == "":
            own = "empty"
        if not self.on_cpu_path:
            return self.default_note or own
        # Paths of one value together, in the table's order of paths.
        groups = {}
        for path, value in self.on_cpu_path:
            groups.setdefault(self.user_text(value), []).append(
                path["spelling"])
        parts = [f"{value} on {join_words(names)}"
                 for value, names in groups.items()]
        text = ", ".join(parts)
        if self.at_its_width:
            text += " (at the path's own vector-width)"
        if self.at_its_width or len(self.on_cpu_path) < len(self.paths) - 1:
            text += f"; else {own}"
        if self.default_note:
            text += f"; {self.default_note}"
        return text

    def pipeline_help(self):
        return f"{self.help} (default: {self.defaults_text()})"


def join_words(words):
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " and " + words[-1]


def dump_records(td, tblgen, includes):
    """llvm-tblgen --dump-json of `td`, parsed."""
    if not tblgen:
        tblgen = shutil.which("llvm-tblgen-22") or shutil.which("llvm-tblgen")
        try:
            bindir = subprocess.run(["llvm-config-22", "--bindir"],
                                    capture_output=True, text=True).stdout
            if bindir.strip():
                tblgen = os.path.join(bindir.strip(), "llvm-tblgen")
        except OSError:
            pass
    if not includes:
        try:
            includes = [subprocess.run(["llvm-config-22", "--includedir"],
                                       capture_output=True,
                                       text=True).stdout.strip()]
        except OSError:
            includes = ["/usr/lib/llvm-22/include"]
    if not tblgen:
        raise GenError("llvm-tblgen not found (scripts/setup.sh installs it)")
    cmd = [tblgen, "--dump-json", td]
    for include in includes:
        cmd += ["-I", include]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise GenError(f"{' '.join(cmd)} failed:\n{run.stderr}")
    return json.loads(run.stdout)


def load(records):
    paths = defs_of(records, "CpuKernelPath")
    chips = defs_of(records, "GpuChip")
    knobs = [Knob(r, records, paths) for r in defs_of(records, "Knob")]
    seen = {}
    for k in knobs:
        if not k.pipeline:
            continue
        key = (k.pipeline, k.argument)
        if key in seen:
            raise GenError(f"{k.id} and {seen[key]} are both the "
                           f"{k.pipeline} pipeline's '{k.argument}'")
        seen[key] = k.id
    # A flag both pipelines take is one flag of the tools: one kind.
    by_flag = {}
    for k in knobs:
        if k.tool:
            other = by_flag.setdefault(k.argument, k)
            if other.kind != k.kind:
                raise GenError(f"{k.id} and {other.id}: the flag "
                               f"--{k.argument} has two kinds")
    return paths, chips, knobs


def pipeline_members(knobs, pipeline, paths):
    out = []
    for k in knobs:
        if k.pipeline != pipeline:
            continue
        cpp_type = k.cpp_type
        args = [f"*this", c_string(k.argument),
                f"::llvm::cl::desc({c_string(k.pipeline_help())})",
                f"::llvm::cl::init({k.pipeline_default})"]
        if cpp_type == CPU_KERNELS:
            values = ", ".join(
                f"clEnumValN({CPU_KERNELS}::{p['cppEnumerator']}, "
                f"{c_string(p['spelling'])}, {c_string(p['description'])})"
                for p in paths)
            args.append(f"::llvm::cl::values({values})")
        out.append(f"  ::mlir::detail::PassOptions::Option<{cpp_type}> "
                   f"{k.cpp_name}{{{', '.join(args)}}};")
    return out


def knob_table(knobs):
    lines = []
    choice_arrays = []
    for k in knobs:
        if not k.pipeline:
            continue
        choices = "{}"
        if k.choices:
            name = f"k{k.id}Choices"
            choice_arrays.append(
                f"static constexpr ::llvm::StringLiteral {name}[] = {{"
                + ", ".join(c_string(c) for c in k.choices) + "};")
            choices = f"{name}"
        fields = [
            f"KnobId::{k.id}",
            f"Pipeline::{PIPELINES[k.pipeline]}",
            c_string(k.argument),
            c_string(k.key),
            f"KnobKind::{k.kind}",
            c_string(k.help),
            c_string(k.defaults_text()),
            c_string(unquote_cpp(k.library_default)),
            c_string(k.defaults_text(library=True)),
            "true" if k.tool else "false",
            "true" if k.library_tuning else "false",
            f"bounds::k{k.id}" if k.kind == "Int" else "IntBounds{}",
            choices,
        ]
        lines.append("    {" + ", ".join(fields) + "},")
    return choice_arrays, lines


def int_bounds(knobs):
    """bounds::k<Record>: the values each int64_t knob takes, for the tools'
    flags and the passes' own checks of their options."""
    out = []
    for k in knobs:
        if k.kind != "Int":
            continue
        out.append(f"/// {k.argument}: {values_text(k)}.")
        out.append(f"inline constexpr IntBounds k{k.id}{{{k.min}, {k.max}, "
                   f"{'true' if k.power_of_two else 'false'}, "
                   f"{k.multiple_of}}};")
    return out


def cpu_path_defaults(knobs, paths):
    """CpuPathDefaults: a member per knob with defaults per path;
    cpuPathDefaults(path[, vectorWidth]): the table's values on `path`."""
    per_path = [k for k in knobs if k.on_cpu_path]
    widths = [k for k in per_path if k.is_path_width]
    if len(widths) != 1 and any(k.at_its_width for k in per_path):
        raise GenError("onCpuPathAtItsWidth needs one knob with isPathWidth")

    def member_type(k):
        return "::llvm::StringRef" if k.cpp_type == CPP_STRING else k.cpp_type

    out = ["/// The defaults of the knobs that differ by CPU kernel path "
           "(Tuning.td's",
           "/// onCpuPath over each knob's own).",
           "struct CpuPathDefaults {"]
    for k in per_path:
        out.append(f"  /// {k.argument}.")
        out.append(f"  {member_type(k)} {k.cpp_name} = {k.pipeline_default};")
    out += ["};", "",
            "/// The defaults on `path`, resolved (auto: the knobs' own).",
            "inline CpuPathDefaults "
            "cpuPathDefaults(::mlir::attn::CpuKernels path) {",
            "  CpuPathDefaults defaults;", "  switch (path) {"]
    for path in paths:
        out.append(f"  case {CPU_KERNELS}::{path['cppEnumerator']}:")
        for k in per_path:
            for p, value in k.on_cpu_path:
                if p is path:
                    out.append(f"    defaults.{k.cpp_name} = {value};")
        out.append("    break;")
    out += ["  }", "  return defaults;", "}", ""]
    if widths:
        width = widths[0].cpp_name
        out += ["/// The defaults on `path` for kernels of `vectorWidth` lanes: "
                "those that",
                "/// hold only at the path's own width (onCpuPathAtItsWidth) "
                "are the knobs' own",
                "/// at another.",
                "inline CpuPathDefaults "
                "cpuPathDefaults(::mlir::attn::CpuKernels path,",
                "                                       int64_t vectorWidth) {",
                "  CpuPathDefaults defaults = cpuPathDefaults(path);",
                f"  if (vectorWidth == defaults.{width})",
                "    return defaults;",
                "  CpuPathDefaults own;"]
        for k in per_path:
            if k.at_its_width:
                out.append(f"  defaults.{k.cpp_name} = own.{k.cpp_name};")
        out += ["  return defaults;", "}"]
    return out


def gen_inc(paths, chips, knobs):
    out = ["// Generated by scripts/tuning-gen.py from "
           "include/attn/Tuning/Tuning.td;",
           "// do not edit.", ""]

    def section(name, body):
        out.append(f"#ifdef {name}")
        out.append(f"#undef {name}")
        out.extend(body)
        out.append(f"#endif // {name}")
        out.append("")

    section("ATTN_TUNING_INT_BOUNDS", int_bounds(knobs))
    section("ATTN_TUNING_KNOB_IDS",
            [f"  {k.id}," for k in knobs if k.pipeline])
    choice_arrays, table = knob_table(knobs)
    section("ATTN_TUNING_KNOB_TABLE", choice_arrays + [
        "static constexpr Knob kKnobs[] = {"] + table + ["};"])
    section("ATTN_TUNING_CPU_PIPELINE_OPTIONS",
            pipeline_members(knobs, "cpu", paths))
    section("ATTN_TUNING_GPU_PIPELINE_OPTIONS",
            pipeline_members(knobs, "gpu", paths))
    section("ATTN_TUNING_GPU_CHIPS", [
        f"    {{{c_string(c['spelling'])}, {c_string(c['ptxFeatures'])}, "
        f"{c['smCount']}}}," for c in chips])
    section("ATTN_TUNING_CPU_PATH_DEFAULTS", cpu_path_defaults(knobs, paths))
    # knobs.json, for `attn-compile --print-knobs` (the Python package asks
    # the attn-compile it runs).
    section("ATTN_TUNING_KNOBS_JSON",
            ['R"attn_knobs(' + gen_json(paths, chips, knobs) + ')attn_knobs"'])
    return "\n".join(out)


def gen_json(paths, chips, knobs):
    """Every knob of a pipeline, with what the tools and Python make of it."""
    entries = []
    for k in knobs:
        if not k.pipeline:
            continue
        entry = {
            "record": k.id,
            "target": TARGETS[k.pipeline],
            "flag": k.argument,
            "name": k.key,
            "type": {"Int": "int", "Bool": "bool", "Choice": "str",
                     "String": "str"}[k.kind],
            "tool": k.tool,
            "help": k.help,
            "defaults": k.defaults_text(),
            "library_defaults": k.defaults_text(library=True),
            "library_tuning": k.library_tuning,
        }
        if k.choices:
            entry["choices"] = k.choices
        if k.min is not None:
            entry["min"] = k.min
        if k.max is not None:
            entry["max"] = k.max
        if k.power_of_two:
            entry["power_of_two"] = True
        if k.multiple_of:
            entry["multiple_of"] = k.multiple_of
        entries.append(entry)
    return json.dumps({
        "generated_from": "include/attn/Tuning/Tuning.td",
        "cpu_kernel_paths": [p["spelling"] for p in paths],
        "gpu_chips": [c["spelling"] for c in chips],
        "knobs": entries,
    }, indent=2) + "\n"


def values_text(k):
    """What a knob takes, for the docs."""
    if k.choices:
        return ", ".join(f"`{c}`" for c in k.choices)
    if k.kind == "Bool":
        return "bool"
    if k.kind == "String":
        return "string"
    text = f"{k.min} to {k.max}"
    if k.power_of_two:
        text += ", a power of two"
    if k.multiple_of:
        text += f", a multiple of {k.multiple_of}"
    return text


def md_cell(text):
    return text.replace("|", "\\|")


def gen_md(paths, chips, knobs):
    """docs/tuning.md: every knob of the pipelines, from the table."""
    out = ["# Tuning knobs", "",
           "<!-- Generated by scripts/tuning-gen.py from "
           "include/attn/Tuning/Tuning.td; do not edit. -->", "",
           "Every option that tunes the generated code is declared once, in "
           "`include/attn/Tuning/Tuning.td`,",
           "with its type, its help and its defaults, per CPU kernel path "
           "where they differ. The passes",
           "list the same records as their options "
           "([passes.md](passes.md)); the pipelines take them as options",
           "(`attn-opt --attn-lower-cpu=\"block-q=32\"`), attn-run and "
           "attn-compile as flags (`--block-q 32`,",
           "one parser, `lib/Tuning`), and the Python package's "
           "`attn.compile` as keyword arguments",
           "(`block_q=32`). Each `--help` states the defaults below; a value "
           "out of range is refused before",
           "anything is compiled. Options given explicitly override what "
           "the kernel path sets.", "",
           "The values column is the one statement of each integer option's "
           "bounds (Tuning.td's `min`,",
           "`max`, `powerOfTwo`, `multipleOf`): the tools check their flags "
           "against it, and each pass",
           "checks its own options against the same record, so a value "
           "handed straight to a pass",
           "(`attn-opt --attn-cpu-sdpa-grad=\"block-q=...\"`) is refused in "
           "one line too. Block sizes stop at 65536 rows or keys (the",
           "backward, which allocates its tiles whole, also refuses a "
           "largest tile above 2^24 elements).",
           ""]
    for pipeline, title, intro in (
            ("cpu", "attn-lower-cpu",
             "The kernel path is `kernels`, with `auto` resolved for the "
             "target CPU (attn-run: this machine; attn-compile: `--cpu`); "
             "[pipelines.md](pipelines.md#kernel-paths) says what each path "
             "is."),
            ("gpu", "The GPU pipelines",
             "`attn-lower-gpu`'s fused kernels (`convert-attn-to-gpu`); "
             "`chip` and `features` are every GPU pipeline's.")):
        mine = [k for k in knobs if k.pipeline == pipeline]
        out += [f"## {title}", "", intro, "",
                "| knob | flag, keyword | values | default | what |",
                "| --- | --- | --- | --- | --- |"]
        for k in mine:
            flag = (f"`--{k.argument}`, `{k.key}`" if k.tool else "")
            default = k.defaults_text()
            if k.library_default:
                default += ("; attn-compile, Python: "
                            + k.defaults_text(library=True))
            out.append(f"| `{k.argument}` | {flag} | {md_cell(values_text(k))} "
                       f"| {md_cell(default)} | {md_cell(k.help)} |")
        out.append("")
        per_path = ([k for k in knobs if k.on_cpu_path]
                    if pipeline == "cpu" else [])
        if per_path:
            named = [p for p in paths if p["spelling"] != "auto"]
            out += ["Defaults per kernel path (a blank: the knob's own; "
                    "&dagger;: at the path's own `vector-width` only; "
                    "*pass*: an option of the pass alone, which "
                    "`attn-lower-cpu` sets from the path):", "",
                    "| knob | " + " | ".join(f"`{p['spelling']}`"
                                             for p in named) + " | else |",
                    "| --- |" + " --- |" * (len(named) + 1)]
            for k in per_path:
                values = {p["spelling"]: k.user_text(v)
                          for p, v in k.on_cpu_path}
                mark = " &dagger;" if k.at_its_width else ""
                if not k.pipeline:
                    mark += " *pass*"
                cells = [md_cell(values.get(p["spelling"], ""))
                         for p in named]
                own = k.user_text(k.pipeline_default)
                out.append(f"| `{k.argument}`{mark} | " + " | ".join(cells)
                           + f" | {md_cell(own)} |")
            out.append("")
    passes_only = [k for k in knobs if not k.pipeline and k.kind == "Int"]
    if passes_only:
        out += ["## Integer options of the passes alone", "",
                "Set by the pipelines from the knobs above; their bounds, "
                "which the passes check:", "",
                "| option | values | default |", "| --- | --- | --- |"]
        for k in passes_only:
            out.append(f"| `{k.argument}` | {md_cell(values_text(k))} | "
                       f"{md_cell(k.user_text(k.pipeline_default))} |")
        out.append("")
    out += ["## GPU chips", "",
            "| chip | PTX features (`features`' default) | SMs (`sm-count`'s "
            "default) |", "| --- | --- | --- |"]
    for c in chips:
        out.append(f"| `{c['spelling']}` | `{c['ptxFeatures']}` | "
                   f"{c['smCount']} |")
    return "\n".join(out) + "\n"


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--td", default=os.path.join(
        root, "include", "attn", "Tuning", "Tuning.td"),
        help="the table (default: the checkout's)")
    parser.add_argument("--records",
                        help="read this llvm-tblgen --dump-json of the table "
                        "instead of running llvm-tblgen")
    parser.add_argument("--tblgen", help="llvm-tblgen (default: LLVM 22's)")
    parser.add_argument("-I", dest="includes", action="append", default=[],
                        help="include directory for llvm-tblgen (default: "
                        "LLVM 22's)")
    parser.add_argument("--inc", help="write the C++ .inc here")
    parser.add_argument("--json", help="write knobs.json here")
    parser.add_argument("--md", help="write the docs page (docs/tuning.md)")
    args = parser.parse_args()
    try:
        if args.records:
            with open(args.records) as f:
                records = json.load(f)
        else:
            records = dump_records(args.td, args.tblgen, args.includes)
        paths, chips, knobs = load(records)
        if args.inc:
            write_if_changed(args.inc, gen_inc(paths, chips, knobs))
        if args.json:
            write_if_changed(args.json, gen_json(paths, chips, knobs))
        if args.md:
            write_if_changed(args.md, gen_md(paths, chips, knobs))
    except GenError as e:
        print(f"tuning-gen: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
