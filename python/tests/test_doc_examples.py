"""docs/python.md's examples run as written."""

import os
import re

import pytest

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def blocks():
    text = open(DOC).read()
    start = text.index("## Examples")
    section = text[start:text.index("\n## ", start + 1)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_numpy_example():
    exec(compile(blocks()[0], "docs/python.md", "exec"), {})


def test_torch_example():
    pytest.importorskip("torch")
    exec(compile(blocks()[1], "docs/python.md", "exec"), {})
