"""Makes `import attn` work in this Python: writes attn.pth into its
site-packages, naming the package's source folder and the build's python/
folder (which holds _attn_build.py, the build directory, so the package finds
attn-compile). Run by the build (target attn-python); rewrites the file only
when it changes; says so and succeeds when site-packages is not writable."""

import os
import sys
import sysconfig


def main(source_dir, build_python_dir):
    site = sysconfig.get_paths()["purelib"]
    pth = os.path.join(site, "attn.pth")
    text = f"{os.path.abspath(source_dir)}\n{os.path.abspath(build_python_dir)}\n"
    try:
        with open(pth) as f:
            if f.read() == text:
                return 0
    except OSError:
        pass
    try:
        with open(pth + ".tmp", "w") as f:
            f.write(text)
        os.replace(pth + ".tmp", pth)
    except OSError as e:
        print(f"attn-python: cannot write {pth} ({e.strerror}); use "
              f"PYTHONPATH={source_dir}:{build_python_dir}")
        return 0
    print(f"attn-python: {pth} -> {source_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
