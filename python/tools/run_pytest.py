"""CTest's entry to the Python tests: runs pytest on python/tests and fails
when pytest fails or collects nothing (its exit code 5), which CTest would
otherwise read as a pass or a plain failure without saying why. The summary
line is also written to BUILD/python/pytest-summary.txt for scripts/test.sh."""

import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
tests = os.path.join(here, "..", "tests")
summary_file = sys.argv[1] if len(sys.argv) > 1 else None
proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", tests],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      text=True)
sys.stdout.write(proc.stdout)
lines = [l for l in proc.stdout.splitlines() if l.strip()]
last = lines[-1].strip("= ") if lines else "no output"
if summary_file:
    with open(summary_file, "w") as f:
        f.write(last + "\n")
if proc.returncode == 5:
    print("run_pytest: pytest collected no tests: failing")
    sys.exit(1)
sys.exit(proc.returncode)
