#!/usr/bin/env python3
"""Generates the C++ and JSON forms of attn's tuning knobs.

Reads the records of include/attn/Tuning/Tuning.td, as `llvm-tblgen
--dump-json` writes them, and writes:

  Knobs.h.inc  the knob ids, the knob table behind the tools' flags
               (lib/Tuning), the pipelines' option members (Pipelines.h),
               the GPU chips and the defaults per CPU kernel path;
  knobs.json   every knob of a pipeline with its flag, type, checks, help
               and defaults: for the Python package (attn.compile's
               keyword arguments) and the tests.

CMake runs it (include/attn/Tuning/CMakeLists.txt); by hand:

  llvm-tblgen-22 --dump-json -I /usr/lib/llvm-22/include \\
      include/attn/Tuning/Tuning.td > records.json
  python3 scripts/tuning-gen.py records.json --inc Knobs.h.inc \\
      --json knobs.json
"""

import argparse
import json
import re
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
        self.at_its_width = bool(rec["onCpuPathAtItsWidth"])
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
        if self.on_cpu_path and self.pipeline != "cpu":
            raise GenError(f"{self.id}: defaults per CPU kernel path on a "
                           f"knob of no CPU pipeline")
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
                or self.power_of_two) and self.kind != "Int":
            raise GenError(f"{self.id}: min, max and powerOfTwo are for "
                           f"int64_t knobs")
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


def load(records_path):
    with open(records_path) as f:
        records = json.load(f)
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
            "true" if k.min is not None else "false",
            str(k.min if k.min is not None else 0),
            "true" if k.max is not None else "false",
            str(k.max if k.max is not None else 0),
            "true" if k.power_of_two else "false",
            choices,
        ]
        lines.append("    {" + ", ".join(fields) + "},")
    return choice_arrays, lines


def cpu_path_defaults(knobs, paths):
    """CpuPathDefaults: a member per knob of attn-lower-cpu with defaults per
    path; cpuPathDefaults(path): the table's values on `path`."""
    per_path = [k for k in knobs if k.on_cpu_path]
    out = ["/// The defaults of attn-lower-cpu's knobs on one CPU kernel path "
           "(Tuning.td's",
           "/// onCpuPath over each knob's own).",
           "struct CpuPathDefaults {"]
    for k in per_path:
        cpp_type = k.cpp_type
        out.append(f"  /// {k.argument}.")
        out.append(f"  {cpp_type} {k.cpp_name} = {k.pipeline_default};")
    out.append("};")
    out.append("")
    out.append("/// The defaults on `path` (auto: the knobs' own).")
    out.append("inline CpuPathDefaults "
               "cpuPathDefaults(::mlir::attn::CpuKernels path) {")
    out.append("  CpuPathDefaults defaults;")
    out.append("  switch (path) {")
    for path in paths:
        out.append(f"  case {CPU_KERNELS}::{path['cppEnumerator']}:")
        for k in per_path:
            for p, value in k.on_cpu_path:
                if p is path:
                    out.append(f"    defaults.{k.cpp_name} = {value};")
        out.append("    break;")
    out.append("  }")
    out.append("  return defaults;")
    out.append("}")
    out.append("")
    out.append("/// Whether a knob's defaults per path hold only at the path's "
               "own")
    out.append("/// vector-width (Tuning.td's onCpuPathAtItsWidth).")
    for k in per_path:
        name = k.cpp_name[0].upper() + k.cpp_name[1:]
        out.append(f"inline constexpr bool k{name}OnPathAtItsWidth = "
                   f"{'true' if k.at_its_width else 'false'};")
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
        entries.append(entry)
    return json.dumps({
        "generated_from": "include/attn/Tuning/Tuning.td",
        "cpu_kernel_paths": [p["spelling"] for p in paths],
        "gpu_chips": [c["spelling"] for c in chips],
        "knobs": entries,
    }, indent=2) + "\n"


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
    parser.add_argument("records", help="llvm-tblgen --dump-json of Tuning.td")
    parser.add_argument("--inc", help="write the C++ .inc here")
    parser.add_argument("--json", help="write knobs.json here")
    args = parser.parse_args()
    try:
        paths, chips, knobs = load(args.records)
        if args.inc:
            write_if_changed(args.inc, gen_inc(paths, chips, knobs))
        if args.json:
            write_if_changed(args.json, gen_json(paths, chips, knobs))
    except GenError as e:
        print(f"tuning-gen: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
