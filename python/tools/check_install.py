"""CTest's python-package: `pip install ./python` into a fresh venv works.

Makes a new venv (VENV, removed first) with this python3 and installs the
package into it with pip from attn's build directory BUILD
(python/pyproject.toml, python/wheel/CMakeLists.txt: the wheel takes
attn-compile from that build), offline: --no-build-isolation (the backend is
the scikit-build-core that scripts/setup.sh installed) and --no-index, the
venv seeing this python3's site-packages for numpy. Then, from a directory
outside the checkout and with no ATTN_COMPILE or PYTHONPATH, `import attn`
must come from the venv with attn-compile inside the package; it compiles and
runs a small attention against attn.reference, compiles a CUDA library when
the package ships the CUDA runtime (linked from the package: the C
compiler's command line is checked), and runs the attn-import-onnx script.
python-pytest then runs the tests in that venv.

Exit 77 (CTest: skipped) when no venv can be made with this python3; the
reason is printed.
"""

import argparse
import os
import shutil
import subprocess
import sys
import textwrap

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SMOKE = textwrap.dedent("""
    import os, sys
    import numpy as np
    import attn
    from attn import _build, reference

    prefix = os.path.realpath(sys.prefix)
    where = os.path.realpath(attn.__file__)
    compiler = _build.compiler_path()
    assert where.startswith(prefix + os.sep), f"attn from {where}, not {prefix}"
    assert compiler.startswith(os.path.dirname(where) + os.sep), compiler
    print(f"python-package: import attn: {where}")
    print(f"python-package: attn-compile: {compiler}")

    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 4, 48, 32)).astype(np.float32)
    k = rng.standard_normal((2, 2, 80, 32)).astype(np.float32)
    v = rng.standard_normal((2, 2, 80, 32)).astype(np.float32)
    kernel = attn.compile("b=2,hq=4,hkv=2,lq=48,lk=80,d=32,"
                          "causal=bottom_right,lse=1")
    out, lse = kernel(q, k, v)
    ref, ref_lse = reference.sdpa(q, k, v, causal="bottom_right")
    sens = reference.sensitivity(q, k, v, causal="bottom_right",
                                 ref=(ref, ref_lse))
    max_abs, rel = reference.errors(out, ref)
    lse_rel = reference.errors(lse, ref_lse)[1]
    print(f"python-package: {kernel.spec}: out rel_l2 {rel:.3g}, "
          f"lse rel_l2 {lse_rel:.3g} (sens {sens[0]:.3g})")
    assert rel <= 1e-5 + 4 * sens[0] and lse_rel <= 1e-5, (rel, lse_rel)
    out = attn.sdpa(q, k, v, is_causal=True, causal="bottom_right",
                    enable_gqa=True)
    rel = reference.errors(out, ref)[1]
    print(f"python-package: attn.sdpa: out rel_l2 {rel:.3g}")
    assert rel <= 1e-5 + 4 * sens[0], rel

    cuda = os.path.join(os.path.dirname(compiler), "..", "lib",
                        "libAttnCudaRuntime.a")
    if os.path.exists(cuda):
        kernel = attn.compile("b=1,hq=2,lq=64,d=64,dtype=f16", target="cuda")
        print(f"python-package: cuda library {os.path.basename(kernel.path)}")
    else:
        print("python-package: no CUDA runtime in the package (attn was "
              "built without cuda.h): no cuda library compiled")
""")


def run(cmd, **kw):
    shown = ["SMOKE (python/tools/check_install.py)" if c == SMOKE else c for c in cmd]
    print("python-package: " + " ".join(shown), flush=True)
    return subprocess.run(cmd, **kw)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--venv", required=True, help="the venv to make")
    p.add_argument("--build-dir", required=True,
                   help="the build directory pip builds the package from")
    p.add_argument("--work-dir", required=True,
                   help="scratch: the smoke test's cwd, cache, C compiler log")
    p.add_argument("--c-compiler", default="cc",
                   help="the C compiler attn-compile links with (the build's)")
    args = p.parse_args()
    args.venv = os.path.abspath(args.venv)
    args.work_dir = os.path.abspath(args.work_dir)

    shutil.rmtree(args.venv, ignore_errors=True)
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    made = run([sys.executable, "-m", "venv", "--system-site-packages",
                args.venv], capture_output=True, text=True)
    python = os.path.join(args.venv, "bin", "python")
    if made.returncode != 0 or not os.path.exists(python):
        print("python-package: SKIPPED: cannot make a venv with "
              f"{sys.executable}: {(made.stderr or made.stdout).strip()}")
        return 77

    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "ATTN_COMPILE", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    installed = run([python, "-m", "pip", "install", "--no-index",
                     "--no-build-isolation", "-C",
                     "cmake.define.ATTN_BUILD_DIR="
                     + os.path.abspath(args.build_dir), PYTHON_DIR], env=env)
    if installed.returncode != 0:
        print("python-package: FAILED: pip install (the backend, "
              "scikit-build-core, comes from scripts/setup.sh)")
        return 1

    # The package's attn-compile, a cache of its own, and a C compiler that
    # logs its command line: the CUDA library must link the package's
    # runtime archive, not the build's.
    cc_log = os.path.join(args.work_dir, "cc.log")
    cc = os.path.join(args.work_dir, "cc")
    with open(cc, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> "{cc_log}"\n'
                f'exec "{os.environ.get("CC") or args.c_compiler}" "$@"\n')
    os.chmod(cc, 0o755)
    env["ATTN_CACHE_DIR"] = os.path.join(args.work_dir, "cache")
    env["CC"] = cc
    smoke = run([python, "-c", SMOKE], cwd=args.work_dir, env=env)
    if smoke.returncode != 0:
        print("python-package: FAILED: the installed package")
        return 1
    if os.path.exists(cc_log):
        archives = [a for a in open(cc_log).read().split()
                    if a.endswith("libAttnCudaRuntime.a")]
        if archives and not all(os.path.realpath(a).startswith(
                os.path.realpath(args.venv) + os.sep) for a in archives):
            print("python-package: FAILED: the CUDA library linked "
                  f"{archives}, not the package's runtime")
            return 1

    script = os.path.join(args.venv, "bin", "attn-import-onnx")
    usage = run([script, "--help"], env=env, capture_output=True, text=True)
    if usage.returncode != 0 or "attn-import-onnx" not in usage.stdout:
        print("python-package: FAILED: attn-import-onnx --help: "
              + usage.stdout + usage.stderr)
        return 1
    print("python-package: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
