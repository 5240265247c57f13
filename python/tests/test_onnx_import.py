"""attn-import-onnx (attn.onnx): ONNX Attention models built with
onnx.helper, imported, run by attn-run (fused against naive, and the f64
reference where the function is one sdpa) and compared with onnxruntime on
the same inputs when it is installed. Skipped without the onnx package."""

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import attn.onnx as attn_onnx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# The installed package's command line (the attn-import-onnx script).
IMPORTER = ["-m", "attn.onnx"]


def attn_run_path():
    """attn-run of the build ($ATTN_RUN, which CTest sets, else build/)."""
    path = os.environ.get("ATTN_RUN") or os.path.join(
        HERE, "..", "..", "build", "bin", "attn-run")
    if not os.path.isfile(path):
        pytest.skip("attn-run not built")
    return path


F32, BOOL = TensorProto.FLOAT, TensorProto.BOOL


def make_model(q, k, v, attrs, mask=None, past=None, present=False,
               opset=23):
    """One Attention node on graph inputs; shapes and dtypes given."""
    inputs = [helper.make_tensor_value_info("Q", F32, q),
              helper.make_tensor_value_info("K", F32, k),
              helper.make_tensor_value_info("V", F32, v)]
    names = ["Q", "K", "V"]
    if mask is not None:
        inputs.append(helper.make_tensor_value_info("M", mask[1], mask[0]))
        names.append("M")
    elif past is not None:
        names.append("")
    if past is not None:
        inputs += [helper.make_tensor_value_info("PK", F32, past[0]),
                   helper.make_tensor_value_info("PV", F32, past[1])]
        names += ["PK", "PV"]
    outputs = ["Y"] + (["PKo", "PVo"] if present else [])
    node = helper.make_node("Attention", names, outputs, name="attn",
                            **attrs)
    graph = helper.make_graph(
        [node], "g", inputs,
        [helper.make_tensor_value_info(o, F32, None) for o in outputs])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


def random_inputs(model, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for info in model.graph.input:
        shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
        if info.type.tensor_type.elem_type == BOOL:
            a = rng.random(shape) < 0.7
            a[..., 0] = True  # no fully masked row: ORT differs there
            arrays.append(a)
        else:
            arrays.append(rng.standard_normal(shape).astype(np.float32))
    return arrays


CASES = {
    "4d-plain": dict(q=[2, 4, 5, 16], k=[2, 4, 7, 16], v=[2, 4, 7, 8],
                     attrs={}),
    "4d-gqa-causal-scale": dict(q=[1, 8, 6, 16], k=[1, 2, 6, 16],
                                v=[1, 2, 6, 16],
                                attrs=dict(is_causal=1, scale=0.2)),
    "4d-float-mask": dict(q=[2, 2, 4, 8], k=[2, 2, 9, 8], v=[2, 2, 9, 8],
                          attrs={}, mask=([2, 1, 4, 9], F32)),
    "3d-gqa-bool-mask-causal": dict(q=[2, 5, 32], k=[2, 5, 16],
                                    v=[2, 5, 8],
                                    attrs=dict(q_num_heads=4, kv_num_heads=2,
                                               is_causal=1),
                                    mask=([5, 5], BOOL)),
    "4d-past-causal": dict(q=[1, 4, 3, 8], k=[1, 2, 3, 8], v=[1, 2, 3, 8],
                           attrs=dict(is_causal=1),
                           past=([1, 2, 4, 8], [1, 2, 4, 8]), present=True),
    "3d-past-bool-mask": dict(q=[1, 2, 16], k=[1, 2, 16], v=[1, 2, 16],
                              attrs=dict(q_num_heads=2, kv_num_heads=2),
                              mask=([1, 2, 2, 5], BOOL),
                              past=([1, 2, 3, 8], [1, 2, 3, 8]),
                              present=True),
    "4d-softcap-float-mask": dict(q=[1, 2, 5, 8], k=[1, 2, 9, 8],
                                  v=[1, 2, 9, 8], attrs=dict(softcap=2.0),
                                  mask=([1, 1, 5, 9], F32)),
    "4d-window-causal": dict(q=[1, 2, 11, 8], k=[1, 2, 13, 8],
                             v=[1, 2, 13, 8],
                             attrs=dict(is_causal=1, left_window_size=3),
                             opset=25),
    "4d-window-both-sides": dict(q=[1, 2, 12, 8], k=[1, 2, 12, 8],
                                 v=[1, 2, 12, 8],
                                 attrs=dict(left_window_size=2,
                                            right_window_size=1, softcap=5.0),
                                 opset=25),
    "4d-window-past": dict(q=[1, 2, 3, 8], k=[1, 2, 3, 8], v=[1, 2, 3, 8],
                           attrs=dict(left_window_size=4, right_window_size=0),
                           past=([1, 2, 6, 8], [1, 2, 6, 8]), opset=25),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_import_run_and_compare(name, tmp_path):
    case = dict(CASES[name])
    model = make_model(case.pop("q"), case.pop("k"), case.pop("v"),
                       case.pop("attrs"), **case)
    model_path = tmp_path / "model.onnx"
    onnx.save(model, str(model_path))
    mlir_path = tmp_path / "model.mlir"
    subprocess.run([sys.executable, *IMPORTER, str(model_path), "-o",
                    str(mlir_path)], check=True)
    text = mlir_path.read_text()
    assert text.count("attn.sdpa") == 1, text

    inputs_dir = tmp_path / "inputs"
    inputs_dir.mkdir()
    arrays = random_inputs(model, seed=len(name))
    for i, a in enumerate(arrays):
        np.save(inputs_dir / f"arg{i}.npy", a)
    dump = tmp_path / "dump"
    run = subprocess.run([attn_run_path(), str(mlir_path), "--inputs",
                          str(inputs_dir), "--dump", str(dump)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    fused = np.load(dump / "fused.npy")

    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    feeds = {info.name: a for info, a in zip(model.graph.input, arrays)}
    expected = session.run(None, feeds)[0]
    assert fused.shape == expected.shape
    np.testing.assert_allclose(fused, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs, outputs, message", [
    (dict(qk_matmul_output_mode=1), 1, "unsupported: qk_matmul_output_mode=1"),
    ({}, 4, "unsupported: the qk_matmul_output output"),
])
def test_unsupported(attrs, outputs, message, tmp_path):
    model = make_model([1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], attrs)
    node = model.graph.node[0]
    node.output.extend(["", "", "QK"][: outputs - 1])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    run = subprocess.run([sys.executable, *IMPORTER, str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr == ("attn-import-onnx: error: Attention node 'attn': "
                          + message + "\n")


def test_window_attn_cannot_align_refused():
    # No causality, no past and Lq != Lk: ONNX centres query i's window on
    # key i, attn on key i + Lk - Lq.
    model = make_model([1, 2, 4, 8], [1, 2, 6, 8], [1, 2, 6, 8],
                       dict(left_window_size=2), opset=25)
    with pytest.raises(attn_onnx.UnsupportedError,
                       match="attn centres a window on key i \\+ 2"):
        attn_onnx.import_model(model)


def test_softcap_and_window_attributes():
    model = make_model([1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8],
                       dict(softcap=30.0, left_window_size=2), opset=25)
    text = attn_onnx.import_model(model)
    assert "softcap = 3.000000000e+01 : f32" in text
    assert "window = array<i64: 2, -1>" in text


def test_old_opset_refused():
    model = make_model([1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], {},
                       opset=23)
    model.opset_import[0].version = 22
    with pytest.raises(attn_onnx.UnsupportedError, match="opset 22"):
        attn_onnx.import_model(model)


# Hostile models (issue 60): every malformed model is one line on stderr
# and exit 2, never a traceback; names never reach the MLIR unescaped.

def run_importer(path, *args):
    """The command line's main() in this process (the subprocess tests
    above run the installed script): its exit code, stdout and stderr."""
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = attn_onnx.main([str(path), *args])
    return subprocess.CompletedProcess(args, rc, out.getvalue(),
                                       err.getvalue())


def attn_opt_path():
    path = os.environ.get("ATTN_OPT") or os.path.join(
        HERE, "..", "..", "build", "bin", "attn-opt")
    if not os.path.isfile(path):
        pytest.skip("attn-opt not built")
    return path


def plain(attrs=None, opset=23, **kw):
    return make_model([1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], attrs or {},
                      opset=opset, **kw)


def with_elem_type(elem):
    model = plain()
    model.graph.input[0].type.tensor_type.elem_type = elem
    return model


def with_inputs(names):
    model = plain()
    del model.graph.node[0].input[:]
    model.graph.node[0].input.extend(names)
    return model


def with_attribute(name, kind, value):
    model = plain()
    a = onnx.AttributeProto(name=name, type=kind)
    if kind == onnx.AttributeProto.STRING:
        a.s = value
    elif kind == onnx.AttributeProto.FLOAT:
        a.f = value
    else:
        a.i = value
    model.graph.node[0].attribute.append(a)
    return model


MALFORMED = {
    "missing-input": (lambda: with_inputs(["Q", "K"]),
                      "Attention node 'attn': missing input V"),
    "zero-heads": (lambda: make_model([1, 4, 16], [1, 4, 16], [1, 4, 16],
                                      dict(q_num_heads=0, kv_num_heads=0)),
                   "Attention node 'attn': q_num_heads must be positive, "
                   "got 0"),
    "unknown-element-type": (lambda: with_elem_type(999),
                             "unsupported: element type <element type 999> "
                             "of 'Q' (Q)"),
    "string-scale": (lambda: with_attribute("scale",
                                            onnx.AttributeProto.STRING, b"x"),
                     "attribute scale must be of type FLOAT, got STRING"),
    "mask-rank-5": (lambda: plain(mask=([1, 1, 2, 4, 4], BOOL)),
                    "unsupported: an attn_mask of rank 5"),
    "scale-0": (lambda: plain(dict(scale=0.0)),
                "scale must be finite and non-zero, got 0.0"),
    "scale-nan": (lambda: plain(dict(scale=float("nan"))),
                  "scale must be finite and non-zero, got nan"),
    "scale-inf": (lambda: plain(dict(scale=float("inf"))),
                  "scale must be finite and non-zero, got inf"),
    "scale-overflows": (lambda: plain(dict(scale=3e38)),
                        "|scale| * log2(e) finite in f32"),
    "softcap-inf": (lambda: plain(dict(softcap=float("inf"))),
                    "softcap must be finite and >= 0 (0: none), got inf"),
    "softcap-nan": (lambda: plain(dict(softcap=float("nan"))),
                    "softcap must be finite and >= 0 (0: none), got nan"),
    "softcap-overflows": (lambda: plain(dict(softcap=3e38)),
                          "|softcap| * log2(e) finite in f32"),
    "opset-99": (lambda: plain(opset=99), "opset 99: attn-import-onnx reads "
                 "opsets 23"),
    "window-in-opset-23": (lambda: plain(dict(left_window_size=2)),
                           "Attention-23 has no attribute "
                           "'left_window_size'"),
    "shapes-disagree": (lambda: make_model([1, 2, 4, 8], [1, 2, 4, 16],
                                           [1, 2, 4, 8], {}),
                        "expected K's head size (16) to equal Q's (8)"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_model_refused_in_one_line(name, tmp_path):
    make, message = MALFORMED[name]
    path = tmp_path / "m.onnx"
    onnx.save(make(), str(path))
    run = run_importer(path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("attn-import-onnx: error: ")
    assert run.stderr.count("\n") == 1, run.stderr
    assert message in run.stderr, run.stderr


def test_truncated_file_refused_in_one_line(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(plain().SerializeToString()[:41])
    run = run_importer(path)
    assert run.returncode == 2
    assert run.stderr.startswith(f"attn-import-onnx: error: {path}: not a "
                                 "readable ONNX model: ")
    assert run.stderr.count("\n") == 1, run.stderr


def test_names_are_escaped_in_comments(tmp_path):
    # A name with a line break once injected IR after the comment line.
    evil = "x\nfunc.func private @evil()\n// "
    model = plain()
    model.graph.node[0].name = evil
    model.graph.input[1].name = evil
    model.graph.node[0].input[1] = evil
    path, out = tmp_path / "m.onnx", tmp_path / "m.mlir"
    onnx.save(model, str(path))
    run = run_importer(path, "-o", str(out))
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "@evil" not in text.replace(repr(evil), "")
    comment = text.splitlines()[0]
    assert comment == (f"// ONNX Attention node {evil!r}: inputs 'Q', "
                       f"{evil!r}, 'V'; outputs 'Y'")
    opt = subprocess.run([attn_opt_path(), str(out)], capture_output=True,
                         text=True)
    assert opt.returncode == 0, opt.stderr
    assert opt.stdout.count("func.func") == 1


def test_duplicate_node_names_get_distinct_symbols(tmp_path):
    model = plain()
    second = onnx.NodeProto()
    second.CopyFrom(model.graph.node[0])
    del second.output[:]
    second.output.append("Y2")
    model.graph.node.append(second)
    model.graph.output.append(helper.make_tensor_value_info("Y2", F32, None))
    text = attn_onnx.import_model(model)
    assert "func.func @attn(" in text and "func.func @attn_1(" in text
    path = tmp_path / "m.mlir"
    path.write_text(text)
    opt = subprocess.run([attn_opt_path(), str(path)], capture_output=True,
                         text=True)
    assert opt.returncode == 0, opt.stderr


def test_external_data_is_not_loaded(tmp_path):
    # K is an initializer whose data is in a file that does not exist: the
    # importer reads its dims and type only (onnx.load with
    # load_external_data=True failed on it before).
    model = plain()
    k = TensorProto(name="K", data_type=F32, dims=[1, 2, 4, 8],
                    data_location=TensorProto.EXTERNAL)
    k.external_data.add(key="location", value="no-such-weights.bin")
    model.graph.initializer.append(k)
    del model.graph.input[1]
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    run = run_importer(path)
    assert run.returncode == 0, run.stderr
    assert "%arg1: tensor<1x2x4x8xf32>" in run.stdout
