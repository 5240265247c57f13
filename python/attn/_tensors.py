"""numpy arrays and torch tensors behind one small interface.

torch is imported only when a torch tensor is passed. Contiguous inputs are
passed by address (zero copy); non-contiguous ones are copied to a contiguous
buffer first (the C ABI takes dense C-order buffers).
"""

import sys

import numpy as np

from . import _kernel


class NumpyBackend:
    name = "numpy"

    @staticmethod
    def prepare(x, target):
        if target != "cpu":
            raise TypeError("attn: numpy arrays live on the host; the "
                            f"{target} target needs device tensors (torch)")
        if not isinstance(x, np.ndarray):
            raise TypeError(f"attn: expected a numpy array, got {type(x).__name__}")
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        return x

    @staticmethod
    def dtype_name(x):
        name = _kernel.DTYPE_NAMES.get(x.dtype)
        if name is None:
            if x.dtype.name == "bfloat16" and _kernel._BF16 is None:
                return "bf16"
            return str(x.dtype)
        return name

    @staticmethod
    def empty(shape, dtype, like):
        return np.empty(shape, _kernel.NP_DTYPES[dtype])

    @staticmethod
    def pointer(x):
        return x.ctypes.data

    @staticmethod
    def stream(x):
        return None

    @staticmethod
    def target(x):
        return "cpu"

    @staticmethod
    def expand(x, shape):
        return np.ascontiguousarray(np.broadcast_to(x, shape))

    @staticmethod
    def full(shape, value, dtype, like):
        return np.full(shape, value, _kernel.NP_DTYPES[dtype])

    @staticmethod
    def to_host(x):
        return x

    @staticmethod
    def from_host(x, like):
        return np.ascontiguousarray(x)


class TorchBackend:
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch
        self.to_name = {torch.float32: "f32", torch.float16: "f16",
                        torch.bfloat16: "bf16", torch.bool: "bool"}
        self.from_name = {v: k for k, v in self.to_name.items()}

    def prepare(self, x, target):
        if not isinstance(x, self.torch.Tensor):
            raise TypeError(f"attn: expected a torch tensor, got {type(x).__name__}")
        if self.target(x) != target:
            raise ValueError(f"attn: expected a tensor on the {target} "
                             f"target, got one on {x.device}")
        if not x.is_contiguous():
            x = x.contiguous()
        return x

    def dtype_name(self, x):
        return self.to_name.get(x.dtype, str(x.dtype).replace("torch.", ""))

    def empty(self, shape, dtype, like):
        return self.torch.empty(shape, dtype=self.from_name[dtype],
                                device=like.device)

    @staticmethod
    def pointer(x):
        return x.data_ptr()

    def stream(self, x):
        if x.device.type == "cuda":
            return self.torch.cuda.current_stream(x.device).cuda_stream
        return None

    def target(self, x):
        t = x.device.type
        if t == "cpu":
            return "cpu"
        if t == "cuda":
            return "cuda"
        raise ValueError(f"attn: tensors on {x.device} are not supported "
                         "(cpu or cuda)")

    def expand(self, x, shape):
        return x.expand(shape).contiguous()

    def full(self, shape, value, dtype, like):
        return self.torch.full(shape, value, dtype=self.from_name[dtype],
                               device=like.device)

    @staticmethod
    def to_host(x):
        return x.detach().cpu().numpy()

    def from_host(self, x, like):
        return self.torch.from_numpy(np.ascontiguousarray(x)).to(like.device)


_numpy = NumpyBackend()
_torch = None


def backend_of(x):
    global _torch
    if isinstance(x, np.ndarray):
        return _numpy
    if type(x).__module__.startswith("torch") and "torch" in sys.modules:
        if _torch is None:
            _torch = TorchBackend()
        if isinstance(x, _torch.torch.Tensor):
            return _torch
    raise TypeError(f"attn: expected a numpy array or a torch tensor, got "
                    f"{type(x).__module__}.{type(x).__name__}")
