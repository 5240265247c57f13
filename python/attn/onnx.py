"""ONNX front end of attn: `Attention` nodes (opsets 23-25) as `attn.sdpa`.

    from attn.onnx import import_model, load
    text = import_model(load("model.onnx"))   # MLIR text, one function
                                              # per Attention node

Each Attention node becomes `func.func @<node name>` whose arguments are the
node's inputs (Q, K, V, then attn_mask, past_key, past_value when present)
and whose results are its outputs (Y, then present_key, present_value when
the node has them). What attn.sdpa does not compute is refused with
UnsupportedError naming the node and the feature: qk_matmul_output,
nonpad_kv_seqlen, a mask shorter than the key sequence, a sliding window
whose diagonal attn cannot align (below). A model that is not a valid ONNX
Attention model (missing inputs, an attribute of the wrong type, zero heads,
shapes that do not agree, a scale of 0, NaN or inf, ...) is refused with
InvalidModelError. Both are OnnxImportError, whose message is one line; the
text returned is valid MLIR that attn-opt parses and verifies. Names from
the model are quoted and escaped wherever they appear (comments, messages)
and turned into symbol names of [A-Za-z0-9_] (made unique), so no name can
inject IR.

The command line: `attn-import-onnx MODEL.onnx [-o OUT.mlir] [--node NAME]`
(installed with the package; also `python -m attn.onnx`). It needs the onnx
package, which attn itself does not (`pip install ./python[onnx]`). It reads
the model without its external data (load(): the importer needs types and
attributes only) and exits 2 with one line on stderr for any model it
refuses.

Semantics follow ONNX's reference implementation (onnx.reference, onnx >=
1.22: softcap before the mask, docs/op.md "Other conventions"):
- 3-D inputs [B, L, H*D] are split into heads (q_num_heads, kv_num_heads) by
  tensor.expand_shape and linalg.transpose, and Y is merged back;
- K/V heads repeat for grouped-query attention as in attn.sdpa (head h reads
  KV head h / (Hq/Hkv));
- past_key/past_value are concatenated in front of K/V along the sequence
  (tensor.insert_slice), and is_causal is then aligned bottom-right (a query
  at i sees keys j <= i + past length); without a past it is top-left;
- a bool mask (true = attend) or a float mask added to the scaled scores,
  broadcast right-aligned (rank < 4 masks get leading unit dims);
- softcap becomes attn.sdpa's `softcap` (both apply it to the scaled score
  before the mask);
- left/right_window_size (opset 25; -1 = unbounded) become attn.sdpa's
  `window`. ONNX centres the window on key i + past for query i; attn on i
  with top-left causality, else on i + Lk - Lq: the two agree with
  is_causal and no past, when Lk - Lq is the past length, or when Lq = Lk;
  anything else is refused.
"""

import math

import onnx
from onnx import AttributeProto, TensorProto, helper, shape_inference

from . import _sdpa

__all__ = ["OnnxImportError", "UnsupportedError", "InvalidModelError",
           "import_model", "load", "ATTENTION_VERSIONS"]

# The versions of the Attention op the importer reads (opsets 23 to the
# newest the installed onnx package knows, while its Attention is one of
# these).
ATTENTION_VERSIONS = (23, 24, 25)

_ELEMENT_TYPES = {
    TensorProto.FLOAT: "f32",
    TensorProto.FLOAT16: "f16",
    TensorProto.BFLOAT16: "bf16",
    TensorProto.BOOL: "i1",
}
_INPUTS = ["Q", "K", "V", "attn_mask", "past_key", "past_value",
           "nonpad_kv_seqlen"]
_OUTPUTS = ["Y", "present_key", "present_value", "qk_matmul_output"]
# Longest piece of a model's name quoted in a comment or a message.
_QUOTE_LIMIT = 120
# MLIR counts a tensor's elements in an int64.
_MAX_ELEMENTS = 2**63 - 1


class OnnxImportError(Exception):
    """The model cannot be imported; the message is one line."""


class UnsupportedError(OnnxImportError):
    """The model uses something attn.sdpa does not compute."""


class InvalidModelError(OnnxImportError):
    """The model is not a valid ONNX model of an Attention node."""


def _quote(name):
    """A name from the model as messages and comments show it: repr() (no
    control character, line break or other non-printable survives), cut to
    _QUOTE_LIMIT characters."""
    name = str(name)
    if len(name) > _QUOTE_LIMIT:
        return repr(name[:_QUOTE_LIMIT]) + "..."
    return repr(name)


def _one_line(error):
    """A foreign exception's message, as one line."""
    text = " ".join(str(error).split())
    return text[:400] or type(error).__name__


def _type_name(elem):
    try:
        return TensorProto.DataType.Name(elem)
    except ValueError:
        return f"<element type {elem}>"


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
        """[B, L, H*D] -> [B, H, L, D] (H divides H*D: checked before)."""
        b, l, hidden = x.shape
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
        """Leading unit dims up to rank 4 (right-aligned broadcasting;
        ranks 1 to 4: checked before)."""
        if len(x.shape) == 4:
            return x
        extra = 4 - len(x.shape)
        groups = [list(range(extra + 1))] + [[extra + 1 + i]
                                             for i in range(len(x.shape) - 1)]
        result = _Tensor(self.fresh(), [1] * extra + x.shape, x.elt)
        self.emit(f"{result.name} = tensor.expand_shape {x.name} {groups} "
                  f"output_shape {result.shape} : {x.type} into {result.type}")
        return result


def load(path):
    """The ModelProto in the file `path`, without its external data (the
    importer reads types and attributes only, never tensor data); anything
    onnx cannot parse is an InvalidModelError."""
    try:
        return onnx.load(path, load_external_data=False)
    except Exception as error:  # protobuf's DecodeError, OSError, onnx's own
        raise InvalidModelError(f"{path}: not a readable ONNX model: "
                                f"{_one_line(error)}") from None


def _attention_schema(model):
    """The Attention schema of the model's default-domain opset, which must
    be in the range the importer reads."""
    versions = [o.version for o in model.opset_import
                if o.domain in ("", "ai.onnx")]
    if len(set(versions)) > 1:
        raise InvalidModelError(
            f"the model imports the default domain at opsets "
            f"{sorted(set(versions))}")
    opset = versions[0] if versions else 0
    newest = onnx.defs.onnx_opset_version()
    if not 23 <= opset <= newest:
        raise UnsupportedError(
            f"opset {opset}: attn-import-onnx reads opsets 23 (the first with "
            f"Attention) to {newest} (the newest the onnx package "
            f"{onnx.__version__} knows)")
    schema = onnx.defs.get_schema("Attention", opset, "")
    if schema.since_version not in ATTENTION_VERSIONS:
        raise UnsupportedError(
            f"opset {opset}: Attention-{schema.since_version} (attn-import-onnx "
            f"reads Attention-{ATTENTION_VERSIONS[0]} to "
            f"-{ATTENTION_VERSIONS[-1]})")
    return schema


def _attributes(node, schema, where):
    """name -> value of the node's attributes, each one the schema declares,
    of its declared type."""
    attrs = {}
    for a in node.attribute:
        if a.ref_attr_name:
            raise InvalidModelError(
                f"{where}: attribute {_quote(a.name)} refers to a function "
                f"attribute ({_quote(a.ref_attr_name)}) outside a function")
        spec = schema.attributes.get(a.name)
        if spec is None:
            raise InvalidModelError(
                f"{where}: Attention-{schema.since_version} has no attribute "
                f"{_quote(a.name)}")
        if a.name in attrs:
            raise InvalidModelError(f"{where}: attribute {_quote(a.name)} "
                                    f"given twice")
        if a.type != int(spec.type):
            try:
                got = AttributeProto.AttributeType.Name(a.type)
            except ValueError:
                got = f"<attribute type {a.type}>"
            want = AttributeProto.AttributeType.Name(int(spec.type))
            raise InvalidModelError(
                f"{where}: attribute {a.name} must be of type {want}, got "
                f"{got}")
        attrs[a.name] = helper.get_attribute_value(a)
    return attrs


def _check_attributes(attrs, where):
    """The attribute values ONNX or attn.sdpa refuse."""
    for name in ("is_causal",):
        if attrs.get(name, 0) not in (0, 1):
            raise InvalidModelError(f"{where}: {name} must be 0 or 1, got "
                                    f"{attrs[name]}")
    for name in ("q_num_heads", "kv_num_heads"):
        if name in attrs and attrs[name] <= 0:
            raise InvalidModelError(f"{where}: {name} must be positive, got "
                                    f"{attrs[name]}")
    if "scale" in attrs:
        scale = attrs["scale"]
        if not math.isfinite(scale) or scale == 0.0:
            raise InvalidModelError(f"{where}: scale must be finite and "
                                    f"non-zero, got {scale!r}")
        try:  # attn.sdpa's verifier: |scale| * log2(e) finite in f32
            _sdpa.check_base2_range([scale], "scale", where)
        except ValueError as error:
            raise UnsupportedError(str(error)) from None
    softcap = attrs.get("softcap", 0.0)
    if not math.isfinite(softcap) or softcap < 0.0:
        raise InvalidModelError(f"{where}: softcap must be finite and "
                                f">= 0 (0: none), got {softcap!r}")
    if softcap > 0.0:
        try:
            _sdpa.check_base2_range([softcap], "softcap", where)
        except ValueError as error:
            raise UnsupportedError(str(error)) from None
    for name in ("left_window_size", "right_window_size"):
        if attrs.get(name, -1) < -1:
            raise InvalidModelError(f"{where}: {name} must be -1 or "
                                    f"non-negative, got {attrs[name]}")
    mode = attrs.get("qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        raise InvalidModelError(f"{where}: qk_matmul_output_mode must be 0 "
                                f"to 3, got {mode}")
    if mode != 0:
        raise UnsupportedError(f"{where}: unsupported: "
                               f"qk_matmul_output_mode={mode}")


def _value_types(model):
    """Name -> (shape, element type) of every typed value of the graph:
    shape None for a value of unknown rank, a dim None where it is not a
    number."""
    try:
        graph = shape_inference.infer_shapes(model).graph
    except Exception as error:  # onnx's InferenceError, ValidationError
        raise InvalidModelError(f"shape inference failed: "
                                f"{_one_line(error)}") from None
    types = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        if info.type.WhichOneof("value") != "tensor_type":
            continue
        tensor = info.type.tensor_type
        dims = None
        if tensor.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None
                    for d in tensor.shape.dim]
        types[info.name] = (dims, tensor.elem_type)
    for init in graph.initializer:
        types[init.name] = (list(init.dims), init.data_type)
    return types


def _operand(types, name, role, where):
    """The static shape and attn element type of the node's input `name`."""
    if name not in types:
        raise UnsupportedError(f"{where}: input {_quote(name)} ({role}) has "
                               f"no known type")
    shape, elem = types[name]
    if shape is None:
        raise UnsupportedError(f"{where}: unsupported: input {_quote(name)} "
                               f"({role}) of unknown rank")
    if any(d is None for d in shape):
        raise UnsupportedError(f"{where}: unsupported: dynamic dims in input "
                               f"{_quote(name)} ({role}) {shape}")
    if any(d < 0 for d in shape):
        raise InvalidModelError(f"{where}: input {_quote(name)} ({role}) has "
                                f"a negative dim: {shape}")
    if math.prod(shape) > _MAX_ELEMENTS:
        raise UnsupportedError(f"{where}: input {_quote(name)} ({role}) has "
                               f"more than 2^63 - 1 elements: {shape}")
    if elem not in _ELEMENT_TYPES:
        raise UnsupportedError(f"{where}: unsupported: element type "
                               f"{_type_name(elem)} of {_quote(name)} ({role})")
    return shape, _ELEMENT_TYPES[elem]


def _expect(condition, where, message):
    if not condition:
        raise InvalidModelError(f"{where}: expected {message}")


def _check_heads(shape, heads, what, where):
    """[B, L, H*D] split into `heads` heads of a positive size."""
    _expect(shape[2] % heads == 0 and shape[2] > 0, where,
            f"{what}'s hidden size (dim 2: {shape[2]}) to be a positive "
            f"multiple of its {heads} heads")


def _check_shapes(q, k, v, past, where):
    """Q, K, V (and past_key, past_value) in the [B, H, L, D] layout:
    the dims attn.sdpa's verifier requires to agree."""
    (b, hq, _, d), (bk, hkv, lk, dk), (bv, hv, lv, dv) = q, k, v
    _expect(bk == b and bv == b, where,
            f"one batch size, got Q {b}, K {bk}, V {bv}")
    _expect(hq > 0 and hkv > 0 and hq % hkv == 0, where,
            f"query heads ({hq}) to be a positive multiple of key/value "
            f"heads ({hkv})")
    _expect(hv == hkv, where, f"V's heads ({hv}) to equal K's ({hkv})")
    _expect(d > 0 and dv > 0, where,
            f"positive head sizes, got Q {d} and V {dv}")
    _expect(dk == d, where, f"K's head size ({dk}) to equal Q's ({d})")
    _expect(lv == lk, where,
            f"V's sequence length ({lv}) to equal K's ({lk})")
    if past is not None:
        pk, pv = past
        _expect(len(pk) == 4 and len(pv) == 4, where,
                f"4-D past_key and past_value, got ranks {len(pk)} and "
                f"{len(pv)}")
        _expect(pk[:2] == [b, hkv] and pk[3] == d, where,
                f"past_key of shape [{b}, {hkv}, P, {d}], got {pk}")
        _expect(pv[:2] == [b, hkv] and pv[2] == pk[2] and pv[3] == dv,
                where, f"past_value of shape [{b}, {hkv}, {pk[2]}, {dv}], got "
                f"{pv}")


def _import_node(node, index, schema, types, symbol):
    where = f"Attention node {_quote(node.name or index)}"

    def unsupported(what):
        return UnsupportedError(f"{where}: unsupported: {what}")

    if len(node.input) > len(_INPUTS) or len(node.output) > len(_OUTPUTS):
        raise InvalidModelError(
            f"{where}: {len(node.input)} inputs and {len(node.output)} "
            f"outputs (Attention has at most {len(_INPUTS)} and "
            f"{len(_OUTPUTS)})")
    attrs = _attributes(node, schema, where)
    _check_attributes(attrs, where)
    inputs = {n: i for n, i in zip(_INPUTS, node.input) if i}
    outputs = {n: o for n, o in zip(_OUTPUTS, node.output) if o}
    missing = [r for r in _INPUTS[:3] if r not in inputs]
    if missing:
        raise InvalidModelError(f"{where}: missing input "
                                + ", ".join(missing))
    if "Y" not in outputs:
        raise InvalidModelError(f"{where}: missing output Y")
    if "qk_matmul_output" in outputs:
        raise unsupported("the qk_matmul_output output")
    if "nonpad_kv_seqlen" in inputs:
        raise unsupported("nonpad_kv_seqlen")
    if ("past_key" in inputs) != ("past_value" in inputs):
        raise InvalidModelError(
            f"{where}: past_key and past_value must come together")

    args = []
    for role in _INPUTS[:6]:
        if role in inputs:
            shape, elt = _operand(types, inputs[role], role, where)
            args.append((role, _Tensor(f"%arg{len(args)}", shape, elt)))
    values = dict(args)
    q, k, v = values["Q"], values["K"], values["V"]
    if q.elt == "i1" or {q.elt} != {k.elt, v.elt}:
        raise InvalidModelError(
            f"{where}: Q, K and V must have one float type, got "
            f"{q.elt}, {k.elt}, {v.elt}")
    rank = len(q.shape)
    if rank not in (3, 4) or len(k.shape) != rank or len(v.shape) != rank:
        raise InvalidModelError(
            f"{where}: Q, K and V must all be 3-D or 4-D, got ranks "
            f"{len(q.shape)}, {len(k.shape)}, {len(v.shape)}")
    if rank == 3:
        if "q_num_heads" not in attrs or "kv_num_heads" not in attrs:
            raise InvalidModelError(
                f"{where}: 3-D inputs need q_num_heads and kv_num_heads")
        hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
        _check_heads(q.shape, hq, "Q", where)
        _check_heads(k.shape, hkv, "K", where)
        _check_heads(v.shape, hkv, "V", where)
        shapes = [[x.shape[0], h, x.shape[1], x.shape[2] // h]
                  for x, h in ((q, hq), (k, hkv), (v, hkv))]
    else:
        for name, dim, x in (("q_num_heads", 1, q), ("kv_num_heads", 1, k)):
            if name in attrs and attrs[name] != x.shape[dim]:
                raise InvalidModelError(
                    f"{where}: {name} ({attrs[name]}) does not match the 4-D "
                    f"input's heads ({x.shape[dim]})")
        shapes = [q.shape, k.shape, v.shape]
    past = None
    if "past_key" in values:
        past = (values["past_key"].shape, values["past_value"].shape)
        if {values["past_key"].elt, values["past_value"].elt} != {k.elt}:
            raise InvalidModelError(
                f"{where}: past_key and past_value must have K's type "
                f"({k.elt}), got {values['past_key'].elt}, "
                f"{values['past_value'].elt}")
    _check_shapes(*shapes, past, where)
    b, hq, lq = shapes[0][:3]
    lk = shapes[1][2] + (past[0][2] if past else 0)
    if "attn_mask" in values:
        mask = values["attn_mask"]
        if not 1 <= len(mask.shape) <= 4:
            raise unsupported(f"an attn_mask of rank {len(mask.shape)} (attn "
                              f"takes ranks 1 to 4, broadcast to [B, Hq, Lq, "
                              f"Lk])")
        if mask.elt not in ("i1", "f32", q.elt):
            raise unsupported(f"a {mask.elt} attn_mask with {q.elt} inputs "
                              f"(attn takes bool, f32 or the inputs' type)")
        if mask.shape[-1] not in (1, lk):
            raise unsupported(
                f"attn_mask's last dim {mask.shape[-1]} (padded to the "
                f"{lk} keys by ONNX)")
        full = [b, hq, lq, lk][4 - len(mask.shape):]
        for i, (m, f) in enumerate(zip(mask.shape, full)):
            _expect(m in (1, f), where,
                    f"attn_mask dim {i} ({m}) to be 1 or {f} (attn_mask "
                    f"{mask.shape} broadcast to [B, Hq, Lq, Lk] = "
                    f"{[b, hq, lq, lk]})")

    fn = _Function()
    if rank == 3:
        q = fn.heads_first(q, attrs["q_num_heads"])
        k = fn.heads_first(k, attrs["kv_num_heads"])
        v = fn.heads_first(v, attrs["kv_num_heads"])
    past_len = 0
    if "past_key" in values:
        past_len = values["past_key"].shape[2]
        k = fn.concat_seq(values["past_key"], k)
        v = fn.concat_seq(values["past_value"], v)

    operands = f"{q.name}, {k.name}, {v.name}"
    operand_types = [q.type, k.type, v.type]
    if "attn_mask" in values:
        mask = fn.rank4(values["attn_mask"])
        operands += f" mask({mask.name})"
        operand_types.append(mask.type)

    sdpa_attrs = []
    if "scale" in attrs:
        sdpa_attrs.append(f"scale = {attrs['scale']:.9e} : f32")
    if attrs.get("is_causal", 0):
        # ONNX: key j is visible to query i iff j <= i + past.
        if past_len == 0:
            sdpa_attrs.append("causal = #attn.causal<top_left>")
        elif lk - lq == past_len:
            sdpa_attrs.append("causal = #attn.causal<bottom_right>")
        else:
            raise unsupported(
                f"is_causal with {past_len} past keys and {lk - past_len} new "
                f"keys for {lq} queries (attn aligns causality top-left or "
                f"bottom-right)")
    softcap = attrs.get("softcap", 0.0)
    if softcap > 0.0:
        sdpa_attrs.append(f"softcap = {softcap:.9e} : f32")
    window = [attrs.get("left_window_size", -1),
              attrs.get("right_window_size", -1)]
    if window != [-1, -1]:
        # ONNX: query i's window is centred on key i + past.
        top_left = attrs.get("is_causal", 0) and past_len == 0
        if not (top_left or lk - lq == past_len):
            raise unsupported(
                f"left_window_size={window[0]}, right_window_size={window[1]} "
                f"with {past_len} past keys, {lk - past_len} new keys and "
                f"{lq} queries (attn centres a window on key i + {lk - lq} "
                f"for query i)")
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
    # Names are quoted (repr: no line break survives) in the comment.
    header = (f"// ONNX {where}: inputs "
              f"{', '.join(_quote(inputs[r]) for r, _ in args)}; outputs "
              f"{', '.join(_quote(o) for o in outputs.values())}\n")
    return (header + f"func.func @{symbol}({signature}) -> "
            f"{result_types} {{\n" + "\n".join(fn.lines) + "\n}\n")


def _symbols(nodes):
    """A distinct symbol name of [A-Za-z0-9_] for each node: its name with
    other characters as _, attention<i> without one, a suffix where two
    would be equal."""
    taken = set()
    out = []
    for index, node in enumerate(nodes):
        text = node.name
        if isinstance(text, bytes):  # a string field that is not UTF-8
            text = text.decode("utf-8", "replace")
        name = "".join(c if (c.isascii() and c.isalnum()) or c == "_" else "_"
                       for c in text[:_QUOTE_LIMIT])
        if not name:
            name = f"attention{index}"
        elif not (name[0].isalpha() or name[0] == "_"):
            name = "attention_" + name
        symbol, n = name, 1
        while symbol in taken:
            symbol = f"{name}_{n}"
            n += 1
        taken.add(symbol)
        out.append(symbol)
    return out


def import_model(model, node_name=None):
    """MLIR text: one func.func per Attention node of `model` (an onnx
    ModelProto), or only the node named `node_name`. Raises OnnxImportError
    (UnsupportedError, InvalidModelError) with a one-line message."""
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"attn.onnx.import_model: expected an onnx.ModelProto, "
                        f"got {type(model).__name__}")
    schema = _attention_schema(model)
    nodes = [n for n in model.graph.node
             if n.op_type == "Attention" and n.domain in ("", "ai.onnx")]
    if node_name is not None:
        nodes = [n for n in nodes if n.name == node_name]
        if not nodes:
            raise UnsupportedError(
                f"no Attention node named {_quote(node_name)}")
    if not nodes:
        raise UnsupportedError("the model has no Attention node")
    types = _value_types(model)
    functions = [_import_node(n, i, schema, types, symbol)
                 for i, (n, symbol) in enumerate(zip(nodes, _symbols(nodes)))]
    return "\n".join(functions)


def main(argv=None):
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="attn-import-onnx",
        description="Turn the Attention nodes of an ONNX model into MLIR "
        "functions that call attn.sdpa. A model it cannot import is one line "
        "on stderr and exit 2.")
    parser.add_argument("model", help="the .onnx file (its external data, if "
                        "any, is not read)")
    parser.add_argument("-o", "--output", default="-",
                        help="the .mlir file to write (default: stdout)")
    parser.add_argument("--node", help="import only the node of this name")
    args = parser.parse_args(argv)
    try:
        text = import_model(load(args.model), args.node)
    except OnnxImportError as error:
        print(f"attn-import-onnx: error: {error}", file=sys.stderr)
        return 2
    try:
        if args.output == "-":
            sys.stdout.write(text)
        else:
            with open(args.output, "w") as f:
                f.write(text)
    except OSError as error:
        print(f"attn-import-onnx: error: {args.output}: {_one_line(error)}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
