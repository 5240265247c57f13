"""CTest's python-pytest: runs pytest on python/tests with the venv that
python-package installed the package into (--venv), so that the tests import
the installed attn, not python/ (no PYTHONPATH; run from the venv's folder).
Fails when pytest fails or collects nothing (its exit code 5), which CTest
would otherwise read as a pass or a plain failure without saying why; exit
77 (skipped) when there is no venv. The summary line is also written to
--summary (BUILD/python/pytest-summary.txt) for scripts/test.sh."""

import argparse
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tests = os.path.join(here, "..", "tests")
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--venv", required=True)
p.add_argument("--summary")
args = p.parse_args()

python = os.path.join(os.path.abspath(args.venv), "bin", "python")
if not os.path.exists(python):
    print(f"run_pytest: SKIPPED: no venv at {args.venv} (python-package made "
          "none: see its output)")
    sys.exit(77)
env = {k: v for k, v in os.environ.items()
       if k not in ("PYTHONPATH", "ATTN_COMPILE", "PYTHONHOME")}
proc = subprocess.run([python, "-m", "pytest", "-q", "-rs", "-p",
                       "no:cacheprovider", os.path.abspath(tests)],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      text=True, env=env, cwd=os.path.abspath(args.venv))
sys.stdout.write(proc.stdout)
lines = [l for l in proc.stdout.splitlines() if l.strip()]
last = lines[-1].strip("= ") if lines else "no output"
if args.summary:
    with open(args.summary, "w") as f:
        f.write(last + "\n")
if proc.returncode == 5:
    print("run_pytest: pytest collected no tests: failing")
    sys.exit(1)
sys.exit(proc.returncode)
