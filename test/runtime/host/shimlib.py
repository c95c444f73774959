"""What the host kernels' Python reference tests share: binding a shim's C
functions (ctypes), passing numpy arrays and calling with an error buffer,
and the failure list with its two checks (a relative error against a
reference, a plain condition). Each test prints one line per check and exits
non-zero when `failures` is not empty."""

import ctypes

import numpy as np
import torch

P = ctypes.c_void_p
I64 = ctypes.c_int64
F32 = ctypes.c_float
F64 = ctypes.c_double
INT = ctypes.c_int
DTYPES = {0: np.float32, 1: np.float64}

failures = []


def bind(lib, signatures):
    """Sets argtypes (from `signatures`, name -> list) and an int result on
    each shim function; returns lib."""
    for name, args in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = INT
    return lib


def ptr(a, offset=0):
    """Address of element `offset` of a C-contiguous numpy array (None -> NULL)."""
    if a is None:
        return None
    assert a.flags.c_contiguous
    return a.ctypes.data + offset * a.itemsize


def call(fn, *args):
    """Calls a shim function; raises with the kernel's message on failure."""
    err = ctypes.create_string_buffer(512)
    if fn(*args, err, len(err)) != 0:
        raise RuntimeError(err.value.decode())


def check(name, ours, ref, tol):
    """max |ours - ref| / max |ref| <= tol, and no NaN in ours."""
    ours = torch.as_tensor(np.asarray(ours, dtype=np.float64))
    ref = ref.detach().to(torch.float64) if torch.is_tensor(ref) else \
        torch.as_tensor(np.asarray(ref, dtype=np.float64))
    scale = max(ref.abs().max().item(), 1e-30)
    err = (ours - ref).abs().max().item() / scale
    ok = err <= tol and not torch.isnan(ours).any().item()
    print(f"{'ok  ' if ok else 'FAIL'} {name}: rel err {err:.2e} (tol {tol:.0e})")
    if not ok:
        failures.append(name)


def expect(name, cond):
    print(f"{'ok  ' if cond else 'FAIL'} {name}")
    if not cond:
        failures.append(name)
