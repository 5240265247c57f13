"""Context-parallel (ring) attention over torch.distributed: attn.sdpa on
tensors whose sequence dim is sharded across the ranks of a process group
(docs/distributed.md).

    import torch.distributed as dist, attn.distributed as ad
    dist.init_process_group("gloo")                  # torchrun sets the rest
    q = ad.shard_sequence(q_full, dist.get_world_size(), dist.get_rank())
    ...
    out = ad.ring_sdpa(q, k, v, causal="top_left")   # this rank's rows

Each rank holds query rows and key/value rows of the global sequences
([B, H, L_local, D]); the key/value blocks travel around the ring (send to
rank + 1, receive from rank - 1, batch_isend_irecv), the next block's
transfer overlapped with the current block's attn calls, and the partial
outputs are merged by their lse in f32. Under the causal rules a block's
visible keys are, for every query row, a prefix of the block (local rows keep
their global order in both layouts), so each block is cut into at most a few
attn calls: rows that see nothing are skipped, rows that see a constant
prefix are one non-causal call, rows whose prefix grows by one key a row are
one bottom_right-causal call on the sub-rectangle (the diagonal blocks need
no mask). The backward (an autograd Function) runs the ring again with the
gradients of K and V travelling with K and V, each block's part computed by
attn.sdpa_grad with the global out and lse.
"""

import functools
import math
import time

import torch
import torch.distributed as dist

from . import _grad
from . import torch as _attn_torch  # noqa: F401  (registers torch.ops.attn)

LAYOUTS = ("zigzag", "contiguous")
_WHO = "attn.distributed.ring_sdpa"
_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Tags keep the K/V and dK/dV messages of one pair of ranks apart (gloo
# matches by tag; NCCL by order, which the code keeps too).
_TAG_KV, _TAG_DKV = 17, 18

_stats = {"calls": 0, "kernel_calls": 0, "skipped_blocks": 0,
          "bytes_sent": 0, "messages": 0, "compute_seconds": 0.0,
          "wait_seconds": 0.0}


def ring_stats(reset=False):
    """This process's counters since the last reset: ring_sdpa calls
    (forward and backward passes), attn kernel calls, blocks skipped without
    one, bytes and messages sent to the next rank, seconds in attn calls and
    merges (host time), seconds blocked waiting for the ring's transfers."""
    out = dict(_stats)
    if reset:
        for k in _stats:
            _stats[k] = 0.0 if k.endswith("seconds") else 0
    return out


# ---------------------------------------------------------------- layouts

def _split_sizes(n, parts):
    """torch.tensor_split's sizes: the first n % parts parts one longer."""
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def _segments(length, world, rank, layout):
    """[(global start, size)] of rank's rows of a sequence of `length`, in
    their local order (which is also their global order)."""
    if layout == "contiguous":
        sizes = _split_sizes(length, world)
        return [(sum(sizes[:rank]), sizes[rank])]
    if layout == "zigzag":
        sizes = _split_sizes(length, 2 * world)
        starts = [sum(sizes[:i]) for i in range(2 * world)]
        a, b = rank, 2 * world - 1 - rank
        return [(starts[a], sizes[a]), (starts[b], sizes[b])]
    raise ValueError(f"attn.distributed: layout must be one of {LAYOUTS}, "
                     f"got {layout!r}")


def local_length(length, world, rank, layout="zigzag"):
    """How many of `length` rows rank holds in `layout`."""
    return sum(s for _, s in _segments(length, world, rank, layout))


def _positions(length, world, rank, layout):
    """The global row index of each of rank's local rows (a long tensor)."""
    parts = [torch.arange(s, s + n) for s, n in
             _segments(length, world, rank, layout)]
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.long)


def shard_sequence(x, world_size, rank, *, layout="zigzag", dim=-2):
    """Rank's rows of x along dim (the sequence dim, -2 for [B, H, L, D]).

    contiguous: x split into world_size consecutive parts (as
    torch.tensor_split: the first L % world_size parts one row longer);
    zigzag: x split into 2 * world_size parts, rank getting parts rank and
    2 * world_size - 1 - rank, so that every rank does equal work under
    causal attention. Returns a new contiguous tensor."""
    if not 0 <= rank < world_size:
        raise ValueError(f"attn.distributed.shard_sequence: expected rank in "
                         f"[0, {world_size}), got {rank}")
    segs = _segments(x.shape[dim], world_size, rank, layout)
    return torch.cat([x.narrow(dim, s, n) for s, n in segs], dim).contiguous()


def unshard_sequence(shards, *, layout="zigzag", dim=-2):
    """The inverse of shard_sequence: the full tensor from every rank's shard
    (a list in rank order; all_gather them first across processes)."""
    world = len(shards)
    length = sum(s.shape[dim] for s in shards)
    pieces = []  # (global start, tensor)
    for rank, x in enumerate(shards):
        want = local_length(length, world, rank, layout)
        if x.shape[dim] != want:
            raise ValueError(
                f"attn.distributed.unshard_sequence: expected shard {rank} "
                f"dim {dim % x.dim()} to be {want} ({layout} layout of "
                f"{length} rows over {world} ranks), but got {x.shape[dim]}")
        off = 0
        for s, n in _segments(length, world, rank, layout):
            pieces.append((s, x.narrow(dim, off, n)))
            off += n
    return torch.cat([t for _, t in sorted(pieces, key=lambda p: p[0])], dim)


# ------------------------------------------------------------ block plans

def _plan(qpos, kpos, offset):
    """The attn calls of one (query rows, key block) pair: [(i0, i1, n,
    causal)], query rows i0:i1 attending keys 0:n of the block, causal
    meaning bottom_right (row i sees n - (i1 - 1 - i) keys). offset None:
    no causality (every row sees the whole block); else key position j is
    visible to query position i iff j <= i + offset, which makes each row's
    visible keys a prefix of the (ascending) block, of count c[i]."""
    lq, lk = len(qpos), len(kpos)
    if lq == 0 or lk == 0:
        return []
    if offset is None:
        return [(0, lq, lk, False)]
    c = torch.searchsorted(kpos, qpos + offset, right=True).tolist()
    calls, i = [], 0
    while i < lq:
        if c[i] == 0:
            i += 1
            continue
        j = i
        while j + 1 < lq and c[j + 1] == c[j] + 1:
            j += 1
        if j > i:  # the count grows by one a row: bottom_right causal
            calls.append((i, j + 1, c[j], True))
        else:      # a constant count: every row sees keys 0:c[i]
            while j + 1 < lq and c[j + 1] == c[i]:
                j += 1
            calls.append((i, j + 1, c[i], False))
        i = j + 1
    return calls


@functools.lru_cache(maxsize=256)
def _block_plan(lq, lk, world, rank, layout, mode, source):
    """_plan of rank's query rows and source's key block (cached: the
    forward, the backward and later calls of the same shapes share it)."""
    offset = None if mode is None else (0 if mode == "top_left" else lk - lq)
    return tuple(_plan(_positions(lq, world, rank, layout),
                       _positions(lk, world, source, layout), offset))


# --------------------------------------------------------- the preflight

def _causal_mode(causal):
    if causal is False or causal is None:
        return None
    if causal is True:
        return "top_left"
    if causal in ("top_left", "bottom_right"):
        return causal
    raise ValueError(f"{_WHO}: causal must be False, True, 'top_left' or "
                     f"'bottom_right', got {causal!r}")


def _local_error(q, k, v):
    """The first problem with this rank's own tensors, or None."""
    for name, x in (("query", q), ("key", k), ("value", v)):
        if not isinstance(x, torch.Tensor):
            return f"expected {name} to be a torch.Tensor"
        if x.dim() != 4:
            return (f"expected {name} to have rank 4 ([B, H, L, D]), but got "
                    f"rank {x.dim()}")
    if q.dtype not in _DTYPES:
        return (f"expected query element type to be float32, float16 or "
                f"bfloat16, but got {q.dtype}")
    for name, x in (("key", k), ("value", v)):
        if x.dtype != q.dtype:
            return (f"expected {name} element type ({x.dtype}) to equal query "
                    f"element type ({q.dtype})")
        if x.device != q.device:
            return f"expected {name} on query's device ({q.device})"
        if x.shape[0] != q.shape[0]:
            return (f"expected {name} dim 0 ({x.shape[0]}) to equal query "
                    f"dim 0 ({q.shape[0]})")
    if k.shape[3] != q.shape[3]:
        return (f"expected key dim 3 ({k.shape[3]}) to equal query dim 3 "
                f"({q.shape[3]})")
    for i in (1, 2):
        if v.shape[i] != k.shape[i]:
            return (f"expected value dim {i} ({v.shape[i]}) to equal key dim "
                    f"{i} ({k.shape[i]})")
    hq, hkv = q.shape[1], k.shape[1]
    if hkv <= 0 or hq % hkv:
        return (f"expected query heads (query dim 1: {hq}) to be a positive "
                f"multiple of key/value heads (key dim 1: {hkv})")
    return None


def _describe(q, k, v, mode, layout, scale):
    err = _local_error(q, k, v)
    if err is not None:
        return {"error": err}
    return {"error": None, "q": tuple(q.shape), "k": tuple(k.shape),
            "v": tuple(v.shape), "dtype": str(q.dtype),
            "device": q.device.type, "causal": mode, "layout": layout,
            "scale": scale}


def _preflight(q, k, v, mode, layout, scale, group):
    """All-gathers every rank's shapes and settings (one collective) and
    checks them together, so that every rank raises the same ValueError
    about the same rank rather than some ranks waiting on the others.
    Returns the per-rank query and key lengths."""
    world = dist.get_world_size(group)
    infos = [None] * world
    dist.all_gather_object(infos, _describe(q, k, v, mode, layout, scale),
                           group=group)
    for r, info in enumerate(infos):
        if info["error"] is not None:
            raise ValueError(f"{_WHO}: rank {r}: {info['error']}")
    first = infos[0]
    for r, info in enumerate(infos[1:], 1):
        for key, what in (("dtype", "element type"), ("device", "device type"),
                          ("causal", "causal"), ("layout", "layout"),
                          ("scale", "scale")):
            if info[key] != first[key]:
                raise ValueError(f"{_WHO}: rank {r}: expected {what} "
                                 f"{first[key]!r} (rank 0's), but got "
                                 f"{info[key]!r}")
        for name, dims in (("query", (0, 1, 3)), ("key", (1, 3)),
                           ("value", (3,))):
            a, b = first[name[0]], info[name[0]]
            for i in dims:
                if a[i] != b[i]:
                    raise ValueError(
                        f"{_WHO}: rank {r}: expected {name} dim {i} ({b[i]}) "
                        f"to equal rank 0's ({a[i]})")
    lq = [info["q"][2] for info in infos]
    lk = [info["k"][2] for info in infos]
    for name, lens in (("query", lq), ("key", lk)):
        total = sum(lens)
        want = [local_length(total, world, r, layout) for r in range(world)]
        if lens != want:
            raise ValueError(
                f"{_WHO}: expected the ranks' {name} dim 2 to be their shares "
                f"of the {total} {name} rows in the {layout} layout over "
                f"{world} ranks ({want}: shard_sequence), but got {lens}")
    return lq, lk


# ---------------------------------------------------------------- the ring

class _Ring:
    """One pass around the ring: the geometry every rank derived from the
    preflight, and the point-to-point transfers."""

    def __init__(self, group, lq, lk, layout, mode):
        self.group = group
        self.world = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        self.next = (self.rank + 1) % self.world
        self.prev = (self.rank - 1) % self.world
        self.lk = lk
        self.geometry = (sum(lq), sum(lk), self.world, self.rank, layout,
                         mode)

    def source(self, step):
        """The rank whose key/value block this rank holds at step."""
        return (self.rank - step) % self.world

    def plan(self, step):
        return _block_plan(*self.geometry, self.source(step))

    def start(self, sends, recvs):
        """Posts (tensor, tag) sends to next and receives from prev; zero-
        sized messages (both sides know the sizes) are not sent."""
        ops = [dist.P2POp(dist.irecv, t, group=self.group,
                          group_peer=self.prev, tag=tag)
               for t, tag in recvs if t.numel()]
        for t, tag in sends:
            if t.numel():
                ops.append(dist.P2POp(dist.isend, t, group=self.group,
                                      group_peer=self.next, tag=tag))
                _stats["bytes_sent"] += t.numel() * t.element_size()
                _stats["messages"] += 1
        return dist.batch_isend_irecv(ops) if ops else []

    @staticmethod
    def wait(works):
        t0 = time.perf_counter()
        for w in works:
            w.wait()
        _stats["wait_seconds"] += time.perf_counter() - t0


def _pack(*ts):
    return torch.cat([t.reshape(-1) for t in ts])


def _unpack(flat, shapes):
    out, off = [], 0
    for s in shapes:
        out.append(flat[off:off + math.prod(s)].view(s))
        off += math.prod(s)
    return out


def _numel(shapes):
    return sum(math.prod(s) for s in shapes)


def _kv_shapes(k, v, n):
    return [(k.shape[0], k.shape[1], n, k.shape[3]),
            (v.shape[0], v.shape[1], n, v.shape[3])]


def _merge(acc_o, acc_l, o, lse):
    """Folds a partial (o, lse) into the f32 accumulators (views)."""
    new = torch.logaddexp(acc_l, lse)
    safe = torch.where(torch.isneginf(new), torch.zeros_like(new), new)
    a = torch.exp(acc_l - safe).unsqueeze(-1)
    b = torch.exp(lse - safe).unsqueeze(-1)
    acc_o.copy_(acc_o * a + o.float() * b)
    acc_l.copy_(new)


def _forward(ring, q, k, v, scale, gqa):
    B, Hq, Lq, _ = q.shape
    acc_o = torch.zeros((B, Hq, Lq, v.shape[3]), dtype=torch.float32,
                        device=q.device)
    acc_l = torch.full((B, Hq, Lq), float("-inf"), dtype=torch.float32,
                       device=q.device)
    kv = _pack(k, v)
    for step in range(ring.world):
        src = ring.source(step)
        works = []
        if step + 1 < ring.world:
            nxt = kv.new_empty(_numel(
                _kv_shapes(k, v, ring.lk[ring.source(step + 1)])))
            works = ring.start([(kv, _TAG_KV)], [(nxt, _TAG_KV)])
        kb, vb = _unpack(kv, _kv_shapes(k, v, ring.lk[src]))
        calls = ring.plan(step)
        if not calls:
            _stats["skipped_blocks"] += 1
        t0 = time.perf_counter()
        for i0, i1, n, causal in calls:
            o, lse = torch.ops.attn.sdpa_lse(
                q[:, :, i0:i1], kb[:, :, :n], vb[:, :, :n], None, causal,
                scale, gqa, "bottom_right")
            _merge(acc_o[:, :, i0:i1], acc_l[:, :, i0:i1], o, lse)
            _stats["kernel_calls"] += 1
        _stats["compute_seconds"] += time.perf_counter() - t0
        ring.wait(works)
        if step + 1 < ring.world:
            kv = nxt
    return acc_o.to(q.dtype), acc_l


def _backward(ring, q, k, v, out, lse, d_out, scale):
    dq = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    kv = _pack(k, v)
    dkv = None  # the f32 dK/dV of the block at hand, from the previous rank
    sending = []
    for step in range(ring.world):
        src = ring.source(step)
        kshape = _kv_shapes(k, v, ring.lk[src])
        recvs, nxt = [], None
        if step > 0:  # the dK/dV of this block, which prev had at step - 1
            dkv = torch.empty(_numel(kshape),
                              dtype=torch.float32, device=q.device)
            recvs.append((dkv, _TAG_DKV))
        sends = []
        if step + 1 < ring.world:
            nxt = kv.new_empty(_numel(
                _kv_shapes(k, v, ring.lk[ring.source(step + 1)])))
            recvs.append((nxt, _TAG_KV))
            sends.append((kv, _TAG_KV))
        works = ring.start(sends, recvs)
        kb, vb = _unpack(kv, kshape)
        part = torch.zeros(_numel(kshape),
                           dtype=torch.float32, device=q.device)
        dkb, dvb = _unpack(part, kshape)
        calls = ring.plan(step)
        if not calls:
            _stats["skipped_blocks"] += 1
        t0 = time.perf_counter()
        for i0, i1, n, causal in calls:
            gq, gk, gv = _grad.sdpa_backward(
                q[:, :, i0:i1], kb[:, :, :n], vb[:, :, :n],
                out[:, :, i0:i1], lse[:, :, i0:i1], d_out[:, :, i0:i1],
                None, causal, scale, causal="bottom_right")
            dq[:, :, i0:i1] += gq.float()
            dkb[:, :, :n] += gk.float()
            dvb[:, :, :n] += gv.float()
            _stats["kernel_calls"] += 1
        _stats["compute_seconds"] += time.perf_counter() - t0
        ring.wait(works + sending)
        if step > 0:
            part += dkv
        # On to the next rank, which holds this block at step + 1 (after the
        # last step, the block's own rank); waited for at the next step.
        if ring.world > 1:
            sending = ring.start([(part, _TAG_DKV)], [])
            sent = part  # alive until the send is waited for  # noqa: F841
        if step + 1 < ring.world:
            kv = nxt
    mine = torch.empty(_numel(_kv_shapes(k, v, k.shape[2])),
                       dtype=torch.float32, device=q.device)
    if ring.world > 1:
        ring.wait(ring.start([], [(mine, _TAG_DKV)]) + sending)
    else:
        mine = part
    dk, dv = _unpack(mine, _kv_shapes(k, v, k.shape[2]))
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


class _RingFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, ring, scale, gqa):
        _stats["calls"] += 1
        out, lse = _forward(ring, q, k, v, scale, gqa)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.ring, ctx.scale = ring, scale
        return out, lse

    @staticmethod
    def backward(ctx, d_out, d_lse):
        q, k, v, out, lse = ctx.saved_tensors
        if d_lse is not None and bool((d_lse != 0).any()):
            raise NotImplementedError(
                f"{_WHO}: the backward does not take a gradient of the lse")
        _stats["calls"] += 1
        dq, dk, dv = _backward(ctx.ring, q, k, v, out, lse,
                               d_out.contiguous(), ctx.scale)
        return dq, dk, dv, None, None, None


def ring_sdpa(query, key, value, *, group=None, causal=False, scale=None,
              return_lse=False, layout="zigzag"):
    """attn.sdpa of the global sequences whose rows the ranks of `group`
    hold (query [B, Hq, Lq_local, D], key [B, Hkv, Lk_local, D], value
    [B, Hkv, Lk_local, Dv], sharded along dim 2 by shard_sequence with the
    same layout): this rank's rows of the output [B, Hq, Lq_local, Dv] (and
    of the f32 natural-log lse [B, Hq, Lq_local] with return_lse).

    causal: False, True or "top_left" (key j visible to query i iff j <= i,
        global indices), "bottom_right" (j <= i + Lk - Lq, global lengths).
    scale: as attn.sdpa's (default 1/sqrt(D)). Fewer key/value heads than
        query heads (a divisor) is grouped-query attention.
    layout: "zigzag" (balanced causal work) or "contiguous".
    Every rank of the group must call it (a collective). Differentiable in
    query, key and value (CPU: attn.sdpa_grad runs on the CPU only).
    Rows that see no key give 0 and lse -inf (attn.sdpa's rule)."""
    mode = _causal_mode(causal)
    if layout not in LAYOUTS:
        raise ValueError(f"{_WHO}: layout must be one of {LAYOUTS}, got "
                         f"{layout!r}")
    if group is None:
        group = dist.group.WORLD
    lq, lk = _preflight(query, key, value, mode, layout, scale, group)
    ring = _Ring(group, lq, lk, layout, mode)
    gqa = query.shape[1] != key.shape[1]
    q, k, v = (x.contiguous() for x in (query, key, value))
    out, lse = _RingFunction.apply(q, k, v, ring, scale, gqa)
    return (out, lse) if return_lse else out
