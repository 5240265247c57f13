"""make_model.py KIND OUT.onnx: the small ONNX Attention models of the lit
tests in this directory (python/tests/test_onnx_import.py runs more, against
onnxruntime)."""
import sys

import onnx
from onnx import TensorProto, helper

F32, BOOL = TensorProto.FLOAT, TensorProto.BOOL


def model(inputs, names, outputs, attrs, opset=23):
    node = helper.make_node("Attention", names, outputs, name="attn", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(o, F32, None) for o in outputs])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


kind, out = sys.argv[1:]
if kind == "3d-gqa":
    m = model([("Q", F32, [2, 5, 32]), ("K", F32, [2, 7, 16]),
               ("V", F32, [2, 7, 8]), ("M", BOOL, [5, 7])],
              ["Q", "K", "V", "M"], ["Y"],
              dict(q_num_heads=4, kv_num_heads=2, is_causal=1, scale=0.25))
elif kind == "past":
    m = model([("Q", F32, [1, 4, 3, 8]), ("K", F32, [1, 2, 3, 8]),
               ("V", F32, [1, 2, 3, 8]), ("PK", F32, [1, 2, 4, 8]),
               ("PV", F32, [1, 2, 4, 8])],
              ["Q", "K", "V", "", "PK", "PV"], ["Y", "PKo", "PVo"],
              dict(is_causal=1))
elif kind == "past-unaligned":
    m = model([("Q", F32, [1, 4, 3, 8]), ("K", F32, [1, 2, 2, 8]),
               ("V", F32, [1, 2, 2, 8]), ("PK", F32, [1, 2, 4, 8]),
               ("PV", F32, [1, 2, 4, 8])],
              ["Q", "K", "V", "", "PK", "PV"], ["Y", "PKo", "PVo"],
              dict(is_causal=1))
elif kind == "softcap":
    m = model([("Q", F32, [1, 2, 4, 8]), ("K", F32, [1, 2, 4, 8]),
               ("V", F32, [1, 2, 4, 8])], ["Q", "K", "V"], ["Y"],
              dict(softcap=50.0))
elif kind == "qk-output":
    m = model([("Q", F32, [1, 2, 4, 8]), ("K", F32, [1, 2, 4, 8]),
               ("V", F32, [1, 2, 4, 8])], ["Q", "K", "V"], ["Y"],
              dict(qk_matmul_output_mode=1))
else:
    sys.exit(f"unknown kind {kind}")
onnx.save(m, out)
