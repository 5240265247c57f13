# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src", config.attn_src_root))
# The tuning knobs as scripts/tuning-gen.py wrote them (Tuning.td).
config.substitutions.append(
    ("%attn_tuning_json",
     os.path.join(config.attn_obj_root, "include", "attn", "Tuning",
                  "knobs.json")))
config.substitutions.append(("%shlibext", config.shlibext))
config.substitutions.append(
    (
        "%mlir_runner_utils",
        os.path.join(config.llvm_lib_dir, "libmlir_runner_utils" + config.shlibext),
    )
)
config.substitutions.append(
    (
        "%attn_runner_utils",
        os.path.join(config.attn_obj_root, "lib", "libattn_runner_utils" + config.shlibext),
    )
)
config.substitutions.append(
    ("%libomp", os.path.join(config.llvm_lib_dir, "libomp" + config.shlibext))
)
config.substitutions.append(
    (
        "%mlir_c_runner_utils",
        os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils" + config.shlibext),
    )
)

# Upstream's FileCheck strictness.
config.environment["FILECHECK_OPTS"] = (
    "-enable-var-scope --allow-unused-prefixes=false"
)

llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# `not` and `count` come from LLVM's tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = [
    "attn-opt",
    "attn-run",
    ToolSubst("mlir-runner", unresolved="fatal"),
    ToolSubst("mlir-translate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# attn as plugins of Debian's own mlir-opt (tools/attn-plugin).
config.substitutions.append(
    ("%attn_plugin", os.path.join(config.attn_obj_root, "lib", "AttnPlugin.so"))
)
config.substitutions.append(
    ("%mlir_opt_stock", os.path.join(config.llvm_tools_dir, "mlir-opt"))
)

# Tests that force a CPU kernel path (attn-run --kernels) need the CPU
# features it uses: cpu-avx512f, cpu-avx512bf16, cpu-avx2, cpu-amx (amx_tile
# and amx_bf16; Linux grants the tile state to attn's runtimes on request)
# from Linux's flags.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        cpu_flags = set(
            next((l for l in cpuinfo if l.startswith("flags")), "").split()
        )
except OSError:
    cpu_flags = set()
for flag, feature in [("avx512f", "cpu-avx512f"), ("avx512_bf16", "cpu-avx512bf16"),
                      ("avx2", "cpu-avx2")]:
    if flag in cpu_flags:
        config.available_features.add(feature)
if {"amx_tile", "amx_bf16", "avx512_bf16"} <= cpu_flags:
    config.available_features.add("cpu-amx")

# GPU integration tests need a CUDA device; the machines CI runs on have none.
if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda-device")

# Tests that compile kernels to PTX and assemble them need the CUDA toolkit
# CMake found (ATTN_CUDA_TOOLKIT_DIR), not a GPU.
if config.cuda_toolkit_dir and os.path.exists(
    os.path.join(config.cuda_toolkit_dir, "bin", "ptxas")
):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(
        ("%ptxas", os.path.join(config.cuda_toolkit_dir, "bin", "ptxas"))
    )
    config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit_dir))

# SASS checks need nvdisasm: the toolkit's, else the one of PyPI's
# nvidia-cuda-nvdisasm wheel (scripts/setup.sh installs it) in the python3
# CMake found.
def find_nvdisasm():
    if config.cuda_toolkit_dir:
        path = os.path.join(config.cuda_toolkit_dir, "bin", "nvdisasm")
        if os.path.exists(path):
            return path
    import subprocess

    run = subprocess.run(
        [config.attn_python3 or "python3", "-c",
         "import importlib.metadata as m; print([str(f.locate()) for f in "
         "m.files('nvidia-cuda-nvdisasm') if f.name == 'nvdisasm'][0])"],
        capture_output=True, text=True)
    path = run.stdout.strip()
    return path if run.returncode == 0 and os.path.exists(path) else None


nvdisasm = find_nvdisasm() if "cuda-toolkit" in config.available_features else None
if nvdisasm:
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", nvdisasm))

# Scripts of the tests (and scripts/gpu_check.py) run under the python3 that
# CMake found at configure time (scripts/setup.sh gives it numpy); a feature
# says whether it can import numpy.
import subprocess

if config.attn_python3 and subprocess.run(
    [config.attn_python3, "-c", "import numpy"], capture_output=True
).returncode == 0:
    config.available_features.add("numpy")
# PyTorch is optional (scripts/setup.sh with ATTN_WITH_FRAMEWORKS=1): the peer
# scripts' tests need it.
if config.attn_python3 and subprocess.run(
    [config.attn_python3, "-c", "import torch"], capture_output=True
).returncode == 0:
    config.available_features.add("torch")
config.substitutions.append(("%attn_python", config.attn_python3 or "python3"))
# The PTX of a GPU pipeline's output, and ptxas's verdict on it (test/Inputs).
config.substitutions.append(
    ("%ptx", (config.attn_python3 or "python3") + " "
     + os.path.join(config.test_source_root, "Inputs", "ptx.py"))
)

# scripts/sanitize.sh's build: ASan reserves terabytes of address space, so
# tests that lower `ulimit -v` cannot run under it.
if getattr(config, "attn_sanitize", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("asan")
