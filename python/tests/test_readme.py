"""The README's Python examples run as written."""

import os
import re

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def blocks():
    text = open(README).read()
    section = text[text.index("## Python"):text.index("## Layout")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_numpy_example():
    exec(compile(blocks()[0], "README.md", "exec"), {})


def test_torch_example():
    pytest.importorskip("torch")
    exec(compile(blocks()[1], "README.md", "exec"), {})
