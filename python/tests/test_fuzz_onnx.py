"""A seeded fuzzer of attn-import-onnx (attn.onnx): valid ONNX Attention
models mutated field by field (opsets, dims, element types, attributes and
their values, names with line breaks and MLIR syntax, inputs and outputs,
external-data initializers, masks of any rank) and byte by byte (flips,
truncations, insertions, splices), then read and imported as the command
line does. Each model must either import to MLIR that attn-opt parses and
verifies, or be refused with an OnnxImportError of one line (the command
line: exit 2, one line on stderr); any other exception, or a crash of the
process, fails the test with the seed and the case that repeats it.

It runs for $ATTN_FUZZ_SECONDS seconds (default 3; docs/testing.md) from
seed $ATTN_FUZZ_SEED (default 0); case i of seed s is the same on every
machine, whatever the budget. The cases run in a child process (this file
with --worker), so that a crash in onnx's C++ code is reported, not fatal.
"""

import contextlib
import io
import json
import os
import random
import subprocess
import sys
import time
import traceback

import pytest

onnx = pytest.importorskip("onnx")
from onnx import AttributeProto, TensorProto, helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# Between two modules of the batch attn-opt checks: a tab, which the
# importer's quoting (repr) never leaves in a comment.
SPLIT = "//\t-----"


def fuzz_budget():
    """(seconds, seed) of a fuzzer run: $ATTN_FUZZ_SECONDS, $ATTN_FUZZ_SEED."""
    return (float(os.environ.get("ATTN_FUZZ_SECONDS", "3")),
            int(os.environ.get("ATTN_FUZZ_SEED", "0")))


# ---------------------------------------------------------------- the models

F32, F16, BOOL = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BOOL


def _model(inputs, names, outputs, attrs, opset=23, extra_nodes=()):
    node = helper.make_node("Attention", names, outputs, name="attn", **attrs)
    graph = helper.make_graph(
        list(extra_nodes) + [node], "g",
        [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(o, F32, None) for o in outputs])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


def seed_models():
    """Valid models the importer takes: each feature it maps."""
    models = [
        _model([("Q", F32, [1, 2, 4, 8]), ("K", F32, [1, 2, 6, 8]),
                ("V", F32, [1, 2, 6, 4])], ["Q", "K", "V"], ["Y"], {}),
        _model([("Q", F32, [2, 5, 32]), ("K", F32, [2, 7, 16]),
                ("V", F32, [2, 7, 8]), ("M", BOOL, [5, 7])],
               ["Q", "K", "V", "M"], ["Y"],
               dict(q_num_heads=4, kv_num_heads=2, is_causal=1, scale=0.25)),
        _model([("Q", F32, [1, 4, 3, 8]), ("K", F32, [1, 2, 3, 8]),
                ("V", F32, [1, 2, 3, 8]), ("PK", F32, [1, 2, 4, 8]),
                ("PV", F32, [1, 2, 4, 8])],
               ["Q", "K", "V", "", "PK", "PV"], ["Y", "PKo", "PVo"],
               dict(is_causal=1)),
        _model([("Q", F16, [1, 2, 5, 8]), ("K", F16, [1, 2, 5, 8]),
                ("V", F16, [1, 2, 5, 8]), ("M", F16, [1, 1, 5, 5])],
               ["Q", "K", "V", "M"], ["Y"],
               dict(softcap=30.0, left_window_size=2, right_window_size=1),
               opset=25),
        # Q from a MatMul: its type comes from shape inference.
        _model([("X", F32, [1, 2, 4, 8]), ("W", F32, [8, 8]),
                ("K", F32, [1, 2, 4, 8]), ("V", F32, [1, 2, 4, 8])],
               ["Q", "K", "V"], ["Y"], {}, opset=24,
               extra_nodes=[helper.make_node("MatMul", ["X", "W"], ["Q"])]),
    ]
    # Two Attention nodes in one graph.
    two = _model([("Q", F32, [1, 2, 4, 8]), ("K", F32, [1, 2, 4, 8]),
                  ("V", F32, [1, 2, 4, 8])], ["Q", "K", "V"], ["Y"], {})
    second = helper.make_node("Attention", ["Q", "K", "V"], ["Y2"],
                              name="attn2", is_causal=1)
    two.graph.node.append(second)
    two.graph.output.append(helper.make_tensor_value_info("Y2", F32, None))
    models.append(two)
    return models


# -------------------------------------------------------------- the mutators

NAMES = ["", "x", "\n", "x\nfunc.func private @evil() \n// ", "}", "{",
         "@x", "%0", "'", '"', "\\", "\u2028", "\x00", "\r\n", "a" * 5000,
         "0abc", "// -----", "é", "\U0001F600", "attn", "Q", "K", "-1",
         "func.func", "\t"]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.125, 1e-45, 1e-38, 3e38, 3.4e38, 2.3e38,
          2.4e38, float("nan"), float("inf"), float("-inf"), 50.0, -5.0]
INTS = [0, 1, -1, -2, 2, 3, 4, 8, 16, 2**31, 2**62, -2**62, 2**63 - 1,
        -2**63, 7, 5]
DIMS = [0, 1, 2, 3, 4, 5, 8, 16, 32, -1, -5, 2**31, 2**40, 2**62, 2**63 - 1]
ATTRS = ["scale", "softcap", "is_causal", "q_num_heads", "kv_num_heads",
         "qk_matmul_output_mode", "softmax_precision", "left_window_size",
         "right_window_size", "bogus", ""]
ATTR_TYPES = [AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING,
              AttributeProto.FLOATS, AttributeProto.INTS,
              AttributeProto.TENSOR, AttributeProto.GRAPH]


def _attention(model, rng):
    nodes = [n for n in model.graph.node if n.op_type == "Attention"]
    return rng.choice(nodes) if nodes else None


def _value_infos(model):
    g = model.graph
    return list(g.input) + list(g.output) + list(g.value_info)


def m_opset(model, rng):
    if rng.random() < 0.2:
        model.opset_import.add(domain=rng.choice(["", "ai.onnx"]),
                               version=rng.choice([23, 24, 99]))
    else:
        model.opset_import[0].version = rng.choice(
            [-1, 0, 1, 22, 23, 24, 25, 26, 28, 29, 99, 2**62])
    return "opset"


def m_dim(model, rng):
    infos = [i for i in _value_infos(model)
             if i.type.HasField("tensor_type")]
    if not infos:
        return "dim (none)"
    info = rng.choice(infos)
    shape = info.type.tensor_type.shape
    r = rng.random()
    if r < 0.1:
        info.type.tensor_type.ClearField("shape")
        return f"shape of {info.name!r} cleared"
    if r < 0.25:
        shape.dim.add().dim_value = rng.choice(DIMS)
        return f"dim added to {info.name!r}"
    if not shape.dim:
        return "dim (rank 0)"
    if r < 0.35:
        del shape.dim[rng.randrange(len(shape.dim))]
        return f"dim removed from {info.name!r}"
    dim = rng.choice(shape.dim)
    if r < 0.45:
        dim.dim_param = "N"
    else:
        dim.dim_value = rng.choice(DIMS)
    return f"dim of {info.name!r}"


def m_elem(model, rng):
    infos = [i for i in _value_infos(model)
             if i.type.HasField("tensor_type")]
    info = rng.choice(infos)
    info.type.tensor_type.elem_type = rng.choice(
        list(range(0, 26)) + [999, 2**31 - 1])
    return f"elem type of {info.name!r}"


def m_attr(model, rng):
    node = _attention(model, rng)
    if node is None:
        return "attr (no node)"
    r = rng.random()
    if r < 0.2 and node.attribute:
        del node.attribute[rng.randrange(len(node.attribute))]
        return "attr removed"
    if r < 0.3 and node.attribute:
        node.attribute.append(rng.choice(node.attribute))
        return "attr duplicated"
    name = rng.choice(ATTRS)
    kind = rng.choice([AttributeProto.FLOAT, AttributeProto.INT] * 3
                      + ATTR_TYPES)
    a = AttributeProto(name=name, type=kind)
    if kind == AttributeProto.FLOAT:
        a.f = rng.choice(FLOATS)
    elif kind == AttributeProto.INT:
        a.i = rng.choice(INTS)
    elif kind == AttributeProto.STRING:
        a.s = rng.choice(NAMES).encode("utf-8", "surrogatepass")
    elif kind == AttributeProto.FLOATS:
        a.floats.extend(rng.sample(FLOATS, 2))
    elif kind == AttributeProto.INTS:
        a.ints.extend(rng.sample(INTS, 2))
    elif kind == AttributeProto.TENSOR:
        a.t.CopyFrom(helper.make_tensor("t", F32, [1], [1.0]))
    else:
        a.g.CopyFrom(helper.make_graph([], "sub", [], []))
    if rng.random() < 0.05:
        a.ref_attr_name = "outer"
    for i, old in enumerate(node.attribute):
        if old.name == name:
            del node.attribute[i]
            break
    node.attribute.append(a)
    return f"attr {name!r} type {kind}"


def m_name(model, rng):
    name = rng.choice(NAMES)
    r = rng.random()
    node = _attention(model, rng)
    if r < 0.4 and node is not None:
        node.name = name
        return "node name"
    # A value renamed everywhere it is used.
    infos = list(model.graph.input)
    if not infos:
        return "name (no input)"
    info = rng.choice(infos)
    old = info.name
    info.name = name
    for n in model.graph.node:
        for i, x in enumerate(n.input):
            if x == old:
                n.input[i] = name
    return f"value {old!r} renamed"


def m_inputs(model, rng):
    node = _attention(model, rng)
    if node is None:
        return "inputs (no node)"
    r = rng.random()
    names = [i.name for i in model.graph.input] + ["", "nowhere"]
    if r < 0.3 and node.input:
        del node.input[rng.randrange(len(node.input))]
        return "input removed"
    if r < 0.6:
        node.input.append(rng.choice(names))
        return "input added"
    if node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(names)
    return "input replaced"


def m_outputs(model, rng):
    node = _attention(model, rng)
    if node is None:
        return "outputs (no node)"
    r = rng.random()
    if r < 0.3 and node.output:
        node.output[rng.randrange(len(node.output))] = ""
        return "output emptied"
    if r < 0.4 and node.output:
        del node.output[:]
        return "outputs removed"
    node.output.append(rng.choice(["", "P1", "P2", "QK", "Y"]))
    return "output added"


def m_node(model, rng):
    node = _attention(model, rng)
    r = rng.random()
    if node is None or r < 0.2:
        model.graph.node.add().CopyFrom(
            helper.make_node("Attention", ["Q", "K", "V"], ["Z"]))
        return "node added"
    if r < 0.4:
        model.graph.node.add().CopyFrom(node)
        return "node duplicated"
    if r < 0.6:
        node.domain = rng.choice(["ai.onnx", "com.microsoft", "x"])
        return "node domain"
    if r < 0.8:
        node.op_type = rng.choice(["attention", "MatMul", ""])
        return "node op_type"
    model.graph.ClearField("node")
    return "nodes removed"


def m_external(model, rng):
    """An initializer whose data lives in an external file (which the
    importer must not read) used as one of the node's inputs."""
    node = _attention(model, rng)
    if node is None or not node.input:
        return "external (no node)"
    dims = [rng.choice([1, 2, 4, 8]) for _ in range(rng.choice([3, 4]))]
    t = TensorProto(name="ext", data_type=F32, dims=dims,
                    data_location=TensorProto.EXTERNAL)
    t.external_data.add(key="location",
                        value=rng.choice(["/etc/passwd", "../../x", "w.bin",
                                          "/proc/self/mem"]))
    t.external_data.add(key="length", value=str(rng.choice([4, 2**40])))
    model.graph.initializer.append(t)
    node.input[rng.randrange(min(3, len(node.input)))] = "ext"
    return "external initializer"


def m_mask(model, rng):
    node = _attention(model, rng)
    if node is None:
        return "mask (no node)"
    rank = rng.choice([0, 1, 2, 3, 4, 5, 6])
    dims = [rng.choice([1, 2, 4, 5, 6, 7, 0]) for _ in range(rank)]
    elem = rng.choice([BOOL, F32, F16, TensorProto.DOUBLE, TensorProto.INT64])
    name = f"M{rng.randrange(100)}"
    model.graph.input.append(helper.make_tensor_value_info(name, elem, dims))
    while len(node.input) < 4:
        node.input.append("")
    node.input[3] = name
    return f"mask rank {rank}"


FIELD_MUTATORS = [m_opset, m_dim, m_dim, m_elem, m_attr, m_attr, m_attr,
                  m_name, m_name, m_inputs, m_outputs, m_node, m_external,
                  m_mask, m_mask]


def mutate_bytes(data, rng, seeds):
    data = bytearray(data)
    r = rng.random()
    if r < 0.3 and data:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), "bytes flipped"
    if r < 0.5:
        return bytes(data[:rng.randrange(len(data) + 1)]), "truncated"
    if r < 0.7:
        at = rng.randrange(len(data) + 1)
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(data[:at] + junk + data[at:]), "bytes inserted"
    other = rng.choice(seeds)
    a, b = rng.randrange(len(data) + 1), rng.randrange(len(other) + 1)
    return bytes(data[:a] + other[b:]), "spliced"


def make_case(seed, i):
    """The bytes of case i of `seed` and what was done to make them."""
    rng = random.Random(f"onnx-fuzz:{seed}:{i}")
    models = seed_models()
    model = onnx.ModelProto()
    model.CopyFrom(rng.choice(models))
    what = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        what.append(rng.choice(FIELD_MUTATORS)(model, rng))
    data = model.SerializeToString()
    if rng.random() < 0.25:
        data, how = mutate_bytes(
            data, rng, [m.SerializeToString() for m in models])
        what.append(how)
    return data, what


# ----------------------------------------------------------------- the worker


def worker(seed, seconds, out_dir):
    """Runs cases until the budget is spent: one JSON line per case on
    stdout (its index first, so that a crash names it)."""
    import attn.onnx as attn_onnx

    deadline = time.monotonic() + seconds
    model_path = os.path.join(out_dir, "case.onnx")
    i = 0
    while time.monotonic() < deadline:
        print(json.dumps({"start": i}), flush=True)
        data, what = make_case(seed, i)
        with open(model_path, "wb") as f:
            f.write(data)
        result = {"case": i}
        try:
            text = attn_onnx.import_model(attn_onnx.load(model_path))
        except attn_onnx.OnnxImportError as error:
            message = str(error)
            result["refused"] = message
            if not message or "\n" in message or "\r" in message:
                result["failure"] = f"a refusal of more than one line: " \
                                    f"{message!r}"
        except Exception:
            result["failure"] = traceback.format_exc(limit=6)
        else:
            path = os.path.join(out_dir, f"{i}.mlir")
            with open(path, "w") as f:
                f.write(text)
            result["mlir"] = path
        if i % 10 == 0 and "failure" not in result:
            # The command line's contract: exit 0, or 2 and one line.
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), \
                        contextlib.redirect_stdout(io.StringIO()):
                    rc = attn_onnx.main([model_path, "-o",
                                         os.path.join(out_dir, "cli.mlir")])
            except BaseException:
                rc, err = None, io.StringIO(traceback.format_exc(limit=6))
            lines = err.getvalue().splitlines()
            if not (rc == 0 and not lines or rc == 2 and len(lines) == 1):
                result["failure"] = (f"attn-import-onnx: exit {rc}, stderr "
                                     f"{err.getvalue()!r}")
        if "failure" in result:
            result["what"] = what
        print(json.dumps(result), flush=True)
        i += 1


# ------------------------------------------------------------------ the test


def attn_opt_path():
    path = os.environ.get("ATTN_OPT") or os.path.join(
        HERE, "..", "..", "build", "bin", "attn-opt")
    return path if os.path.isfile(path) else None


def test_onnx_importer_fuzz(tmp_path):
    seconds, seed = fuzz_budget()
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", str(seed),
         str(seconds), str(tmp_path)],
        capture_output=True, text=True, timeout=seconds * 20 + 120)
    results = [json.loads(line) for line in proc.stdout.splitlines()
               if line.startswith("{")]
    started = [r["start"] for r in results if "start" in r]
    done = [r for r in results if "case" in r]
    if proc.returncode != 0:
        last = started[-1] if started else None
        what = make_case(seed, last)[1] if last is not None else None
        pytest.fail(f"the importer's process died (exit {proc.returncode}) "
                    f"on seed {seed} case {last} ({what}): "
                    f"{proc.stderr[-2000:]}")
    failures = [r for r in done if "failure" in r]
    assert not failures, (
        f"seed {seed}: {len(failures)} of {len(done)} cases failed; the "
        f"first, case {failures[0]['case']} ({failures[0]['what']}):\n"
        f"{failures[0]['failure']}")
    texts = [r["mlir"] for r in done if "mlir" in r]
    refused = sum("refused" in r for r in done)
    print(f"onnx fuzz: seed {seed}, {len(done)} cases in {seconds} s: "
          f"{len(texts)} imported, {refused} refused")
    assert len(done) >= 20, f"only {len(done)} cases ran in {seconds} s"
    opt = attn_opt_path()
    if opt is None or not texts:
        pytest.skip("attn-opt not built: the imported MLIR was not checked")
    batch = tmp_path / "all.mlir"
    batch.write_text(f"\n{SPLIT}\n".join(open(p).read() for p in texts))
    run = subprocess.run([opt, f"--split-input-file={SPLIT}", str(batch),
                          "-o", os.devnull], capture_output=True, text=True)
    if run.returncode != 0:
        for p in texts:
            one = subprocess.run([opt, p, "-o", os.devnull],
                                 capture_output=True, text=True)
            if one.returncode != 0:
                case = int(os.path.basename(p)[:-5])
                pytest.fail(f"seed {seed} case {case} "
                            f"({make_case(seed, case)[1]}): attn-opt rejects "
                            f"the imported MLIR:\n{one.stderr[:2000]}\n"
                            f"{open(p).read()[:2000]}")
        pytest.fail(f"attn-opt rejects the batch: {run.stderr[:2000]}")


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    worker(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
