"""ONNX front end of attn: `Attention` nodes (opsets 23-25) as `attn.sdpa`.

    from attn.onnx import import_model
    text = import_model(onnx.load("model.onnx"))   # MLIR text, one function
                                                   # per Attention node

Each Attention node becomes `func.func @<node name>` whose arguments are the
node's inputs (Q, K, V, then attn_mask, past_key, past_value when present)
and whose results are its outputs (Y, then present_key, present_value when
the node has them). What attn.sdpa does not compute is refused with
UnsupportedError naming the node and the feature: qk_matmul_output,
nonpad_kv_seqlen, a mask shorter than the key sequence, a sliding window
whose diagonal attn cannot align (below).

The command line: `attn-import-onnx MODEL.onnx [-o OUT.mlir] [--node NAME]`
(installed with the package; also `python -m attn.onnx`). It needs the onnx
package, which attn itself does not (`pip install ./python[onnx]`).

Semantics follow ONNX's reference implementation (onnx.reference):
- 3-D inputs [B, L, H*D] are split into heads (q_num_heads, kv_num_heads) by
  tensor.expand_shape and linalg.transpose, and Y is merged back;
- K/V heads repeat for grouped-query attention as in attn.sdpa (head h reads
  KV head h / (Hq/Hkv));
- past_key/past_value are concatenated in front of K/V along the sequence
  (tensor.insert_slice), and is_causal is then aligned bottom-right (a query
  at i sees keys j <= i + past length); without a past it is top-left;
- a bool mask (true = attend) or a float mask added to the scaled scores,
  broadcast right-aligned (rank < 4 masks get leading unit dims);
- softcap (opset 23) becomes attn.sdpa's `softcap` (both apply it to the
  scaled score before the mask);
- left/right_window_size (opset 25; -1 = unbounded) become attn.sdpa's
  `window`. ONNX centres the window on key i + past for query i; attn on i
  with top-left causality, else on i + Lk - Lq: the two agree with
  is_causal and no past, when Lk - Lq is the past length, or when Lq = Lk;
  anything else is refused.
"""

import re

import onnx
from onnx import TensorProto, helper, shape_inference

__all__ = ["UnsupportedError", "import_model"]

_ELEMENT_TYPES = {
    TensorProto.FLOAT: "f32",
    TensorProto.FLOAT16: "f16",
    TensorProto.BFLOAT16: "bf16",
    TensorProto.BOOL: "i1",
}
_INPUTS = ["Q", "K", "V", "attn_mask", "past_key", "past_value",
           "nonpad_kv_seqlen"]
_OUTPUTS = ["Y", "present_key", "present_value", "qk_matmul_output"]


class UnsupportedError(Exception):
    """The model uses something attn.sdpa does not compute."""


class _Tensor:
    """An SSA value with its static shape and element type."""

    def __init__(self, name, shape, elt):
        self.name, self.shape, self.elt = name, list(shape), elt

    @property
    def type(self):
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.elt + ">"


class _Function:
    """Builds the body of one func.func, one line per op."""

    def __init__(self):
        self.lines = []
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"%{self.count - 1}"

    def emit(self, text):
        self.lines.append("  " + text)

    def empty(self, shape, elt):
        result = _Tensor(self.fresh(), shape, elt)
        self.emit(f"{result.name} = tensor.empty() : {result.type}")
        return result

    def heads_first(self, x, heads):
        """[B, L, H*D] -> [B, H, L, D]."""
        b, l, hidden = x.shape
        if hidden % heads:
            raise UnsupportedError(
                f"hidden size {hidden} is not a multiple of {heads} heads")
        split = _Tensor(self.fresh(), [b, l, heads, hidden // heads], x.elt)
        self.emit(f"{split.name} = tensor.expand_shape {x.name} "
                  f"[[0], [1], [2, 3]] output_shape {split.shape} "
                  f": {x.type} into {split.type}")
        return self.transpose_1_2(split)

    def heads_last(self, x):
        """[B, H, L, D] -> [B, L, H*D]."""
        t = self.transpose_1_2(x)
        b, l, h, d = t.shape
        merged = _Tensor(self.fresh(), [b, l, h * d], x.elt)
        self.emit(f"{merged.name} = tensor.collapse_shape {t.name} "
                  f"[[0], [1], [2, 3]] : {t.type} into {merged.type}")
        return merged

    def transpose_1_2(self, x):
        b, one, two, three = x.shape
        init = self.empty([b, two, one, three], x.elt)
        result = _Tensor(self.fresh(), init.shape, x.elt)
        self.emit(f"{result.name} = linalg.transpose ins({x.name} : {x.type}) "
                  f"outs({init.name} : {init.type}) permutation = [0, 2, 1, 3]")
        return result

    def concat_seq(self, past, new):
        """past ++ new along dim 2 (the sequence) of [B, H, L, D]."""
        b, h, lp, d = past.shape
        ln = new.shape[2]
        init = self.empty([b, h, lp + ln, d], past.elt)
        head = _Tensor(self.fresh(), init.shape, past.elt)
        self.emit(f"{head.name} = tensor.insert_slice {past.name} into "
                  f"{init.name}[0, 0, 0, 0] [{b}, {h}, {lp}, {d}] [1, 1, 1, 1] "
                  f": {past.type} into {init.type}")
        full = _Tensor(self.fresh(), init.shape, past.elt)
        self.emit(f"{full.name} = tensor.insert_slice {new.name} into "
                  f"{head.name}[0, 0, {lp}, 0] [{b}, {h}, {ln}, {d}] "
                  f"[1, 1, 1, 1] : {new.type} into {head.type}")
        return full

    def rank4(self, x):
        """Leading unit dims up to rank 4 (right-aligned broadcasting)."""
        if len(x.shape) == 4:
            return x
        if not x.shape:
            raise UnsupportedError("a rank-0 attn_mask")
        extra = 4 - len(x.shape)
        groups = [list(range(extra + 1))] + [[extra + 1 + i]
                                             for i in range(len(x.shape) - 1)]
        result = _Tensor(self.fresh(), [1] * extra + x.shape, x.elt)
        self.emit(f"{result.name} = tensor.expand_shape {x.name} {groups} "
                  f"output_shape {result.shape} : {x.type} into {result.type}")
        return result


def _attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _symbol(name, index):
    name = re.sub(r"[^A-Za-z0-9_]", "_", name) if name else ""
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = f"attention{index}" if not name else "attention_" + name
    return name


def _value_types(model):
    """Name -> (shape, element type) of every typed value of the graph."""
    inferred = shape_inference.infer_shapes(model)
    graph = inferred.graph
    types = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        tensor = info.type.tensor_type
        dims = []
        for dim in tensor.shape.dim:
            dims.append(dim.dim_value if dim.HasField("dim_value") else None)
        types[info.name] = (dims, tensor.elem_type)
    for init in graph.initializer:
        types[init.name] = (list(init.dims), init.data_type)
    return types


def _import_node(node, index, types):
    where = f"Attention node '{node.name or index}'"

    def unsupported(what):
        return UnsupportedError(f"{where}: unsupported: {what}")

    attrs = _attributes(node)
    softcap = float(attrs.get("softcap", 0.0))
    if softcap < 0.0:
        raise UnsupportedError(f"{where}: softcap={softcap} is negative")
    window = [int(attrs.get("left_window_size", -1)),
              int(attrs.get("right_window_size", -1))]
    if min(window) < -1:
        raise UnsupportedError(
            f"{where}: window sizes must be -1 or non-negative, got {window}")
    if attrs.get("qk_matmul_output_mode", 0) != 0:
        raise unsupported(
            f"qk_matmul_output_mode={attrs['qk_matmul_output_mode']}")
    outputs = {n: o for n, o in zip(_OUTPUTS, node.output) if o}
    if "qk_matmul_output" in outputs:
        raise unsupported("the qk_matmul_output output")
    inputs = {n: i for n, i in zip(_INPUTS, node.input) if i}
    if "nonpad_kv_seqlen" in inputs:
        raise unsupported("nonpad_kv_seqlen")
    if ("past_key" in inputs) != ("past_value" in inputs):
        raise UnsupportedError(
            f"{where}: past_key and past_value must come together")

    fn = _Function()
    args = []
    for role in _INPUTS[:6]:
        if role not in inputs:
            continue
        name = inputs[role]
        if name not in types:
            raise UnsupportedError(f"{where}: input '{name}' has no known type")
        shape, elem = types[name]
        if any(d is None for d in shape):
            raise unsupported(f"dynamic dims in input '{name}' {shape}")
        if elem not in _ELEMENT_TYPES:
            raise unsupported(f"element type "
                              f"{TensorProto.DataType.Name(elem)} of '{name}'")
        args.append((role, _Tensor(f"%arg{len(args)}", shape,
                                   _ELEMENT_TYPES[elem])))
    values = dict(args)
    q, k, v = values["Q"], values["K"], values["V"]
    if q.elt == "i1" or {q.elt} != {k.elt, v.elt}:
        raise UnsupportedError(
            f"{where}: Q, K and V must have one float type, got "
            f"{q.elt}, {k.elt}, {v.elt}")
    rank = len(q.shape)
    if rank not in (3, 4) or len(k.shape) != rank or len(v.shape) != rank:
        raise UnsupportedError(f"{where}: Q, K and V must all be 3-D or 4-D")
    if rank == 3:
        if "q_num_heads" not in attrs or "kv_num_heads" not in attrs:
            raise UnsupportedError(
                f"{where}: 3-D inputs need q_num_heads and kv_num_heads")
        q = fn.heads_first(q, attrs["q_num_heads"])
        k = fn.heads_first(k, attrs["kv_num_heads"])
        v = fn.heads_first(v, attrs["kv_num_heads"])

    past = 0
    if "past_key" in values:
        past = values["past_key"].shape[2]
        k = fn.concat_seq(values["past_key"], k)
        v = fn.concat_seq(values["past_value"], v)

    lq, lk = q.shape[2], k.shape[2]
    operands = f"{q.name}, {k.name}, {v.name}"
    operand_types = [q.type, k.type, v.type]
    if "attn_mask" in values:
        mask = values["attn_mask"]
        if mask.shape and mask.shape[-1] not in (1, lk):
            raise unsupported(
                f"attn_mask's last dim {mask.shape[-1]} (padded to the "
                f"{lk} keys by ONNX)")
        mask = fn.rank4(mask)
        operands += f" mask({mask.name})"
        operand_types.append(mask.type)

    sdpa_attrs = []
    if "scale" in attrs:
        sdpa_attrs.append(f"scale = {float(attrs['scale']):.9e} : f32")
    if attrs.get("is_causal", 0):
        # ONNX: key j is visible to query i iff j <= i + past.
        if past == 0:
            sdpa_attrs.append("causal = #attn.causal<top_left>")
        elif lk - lq == past:
            sdpa_attrs.append("causal = #attn.causal<bottom_right>")
        else:
            raise unsupported(
                f"is_causal with {past} past keys and {lk - past} new keys "
                f"for {lq} queries (attn aligns causality top-left or "
                f"bottom-right)")
    if softcap > 0.0:
        sdpa_attrs.append(f"softcap = {softcap:.9e} : f32")
    if window != [-1, -1]:
        # ONNX: query i's window is centred on key i + past.
        top_left = attrs.get("is_causal", 0) and past == 0
        if not (top_left or lk - lq == past):
            raise unsupported(
                f"left_window_size={window[0]}, right_window_size={window[1]} "
                f"with {past} past keys, {lk - past} new keys and {lq} queries "
                f"(attn centres a window on key i + {lk - lq} for query i)")
        sdpa_attrs.append(f"window = array<i64: {window[0]}, {window[1]}>")
    attr_text = " {" + ", ".join(sdpa_attrs) + "}" if sdpa_attrs else ""
    out = _Tensor(fn.fresh(), q.shape[:3] + [v.shape[3]], q.elt)
    fn.emit(f"{out.name} = attn.sdpa {operands}{attr_text} : "
            f"{', '.join(operand_types)} -> {out.type}")

    results = [fn.heads_last(out) if rank == 3 else out]
    if "present_key" in outputs:
        results.append(k)
    if "present_value" in outputs:
        results.append(v)
    fn.emit("return " + ", ".join(r.name for r in results) + " : "
            + ", ".join(r.type for r in results))

    signature = ", ".join(f"{t.name}: {t.type}" for _, t in args)
    result_types = ", ".join(r.type for r in results)
    if len(results) > 1:
        result_types = f"({result_types})"
    header = (f"// ONNX {where}: inputs "
              f"{', '.join(inputs[r] for r, _ in args)}; outputs "
              f"{', '.join(outputs.values())}\n")
    return (header + f"func.func @{_symbol(node.name, index)}({signature}) -> "
            f"{result_types} {{\n" + "\n".join(fn.lines) + "\n}\n")


def import_model(model, node_name=None):
    """MLIR text: one func.func per Attention node of `model` (an onnx
    ModelProto), or only the node named `node_name`."""
    domain_versions = {o.domain: o.version for o in model.opset_import}
    opset = domain_versions.get("", domain_versions.get("ai.onnx", 0))
    nodes = [n for n in model.graph.node
             if n.op_type == "Attention" and n.domain in ("", "ai.onnx")]
    if opset < 23:
        raise UnsupportedError(
            f"opset {opset}: the Attention op needs opset 23 or newer")
    if node_name is not None:
        nodes = [n for n in nodes if n.name == node_name]
        if not nodes:
            raise UnsupportedError(f"no Attention node named '{node_name}'")
    if not nodes:
        raise UnsupportedError("the model has no Attention node")
    types = _value_types(model)
    functions = [_import_node(n, i, types) for i, n in enumerate(nodes)]
    return "\n".join(functions)


def main(argv=None):
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="attn-import-onnx",
        description="Turn the Attention nodes of an ONNX model into MLIR "
        "functions that call attn.sdpa.")
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", default="-",
                        help="the .mlir file to write (default: stdout)")
    parser.add_argument("--node", help="import only the node of this name")
    args = parser.parse_args(argv)
    try:
        text = import_model(onnx.load(args.model), args.node)
    except UnsupportedError as error:
        print(f"attn-import-onnx: error: {error}", file=sys.stderr)
        return 2
    except (OSError, onnx.onnx_cpp2py_export.checker.ValidationError,
            onnx.onnx_cpp2py_export.shape_inference.InferenceError) as error:
        print(f"attn-import-onnx: error: {args.model}: {error}",
              file=sys.stderr)
        return 2
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
