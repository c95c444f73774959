#!/usr/bin/env python3
"""bmrt::gemm (BLAS path and matrix-vector path) against numpy and torch.

Our gemm runs through gemm_shim (ctypes). The reference is numpy float64
matmul on the same inputs, then torch's own activations (F.gelu with
approximate='tanh' and exact erf, F.silu, F.relu, torch.tanh), so a mistake
in our element functions cannot be mirrored. Covered: both Trans, m in
{1, 2, 3, 7, 64}, n and k not multiples of 16 (and k = 0), leading dimensions
larger than minimal with NaN in the padding (a kernel reading past a row
poisons its output), C's padding must stay untouched, every epilogue, bias
null or not, residual null / separate / aliasing c, float and double.
m == 1 must take the matrix-vector path (profiled as gemv) and m == 64 the
BLAS path; for B [n, k] the m == 1 result on row 0 of the m == 64 inputs is
checked against the same reference as the m == 64 result.

Also bmrt::gemm_ex (the backward's GEMM: op(a) . op(b), every transA x
transB, overwrite or accumulate into c, padded leading dimensions, k = 0)
against numpy float64 on the same inputs.

usage: gemm_reference_test.py <libgemm_shim.so>
Tolerance: |ours - ref| <= tol * (|a| @ |op(b)| + |bias| + |residual|)
elementwise (the conditioning of a dot product), tol = 1e-5 (float) or 1e-12
(double), times max(1, k / 256) for longer sums.
"""
import ctypes
import sys

import numpy as np
import torch
import torch.nn.functional as F

P = ctypes.c_void_p
I64 = ctypes.c_int64
INT = ctypes.c_int
DTYPES = {0: np.float32, 1: np.float64}
BASE_TOL = {0: 1e-5, 1: 1e-12}
TRANS_N, TRANS_T = 0, 1
ACTIVATIONS = {  # bmrt::Epilogue value -> torch reference
    0: ("none", lambda x: x),
    1: ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    2: ("gelu_erf", lambda x: F.gelu(x)),
    3: ("relu", F.relu),
    4: ("silu", F.silu),
    5: ("tanh", torch.tanh),
}
THREADS = 2
failures = []


def load(path):
    lib = ctypes.CDLL(path)
    lib.bmrt_test_gemm.argtypes = [INT, INT, I64, I64, I64, P, I64, P, I64, INT, P, I64,
                                   P, INT, P, P, P, INT]
    lib.bmrt_test_gemm.restype = INT
    lib.bmrt_test_gemm_ex.argtypes = [INT, INT, INT, INT, I64, I64, I64, P, I64, P, I64, P,
                                      I64, INT, P, INT]
    lib.bmrt_test_gemm_ex.restype = INT
    return lib


def ptr(a):
    return None if a is None else a.ctypes.data


def padded(rng, rows, cols, ld, dtype):
    """[rows, ld] buffer: uniform(-1, 1) in the first cols columns, NaN after."""
    buf = np.full((rows, ld), np.nan, dtype=dtype)
    buf[:, :cols] = rng.uniform(-1, 1, (rows, cols))
    return buf


def call_gemm(lib, dtype, m, n, k, a, lda, b, ldb, trans, c, ldc, bias, act, residual):
    err = ctypes.create_string_buffer(512)
    kinds = np.zeros(2, dtype=np.int64)
    rc = lib.bmrt_test_gemm(dtype, THREADS, m, n, k, ptr(a), lda, ptr(b), ldb, trans,
                            ptr(c), ldc, ptr(bias), act, ptr(residual), ptr(kinds), err,
                            len(err))
    if rc != 0:
        raise RuntimeError(err.value.decode())
    return kinds  # [gemm calls, gemv calls]


def reference(a, b_op, bias, act, residual):
    """float64: act(a @ b_op + bias) + residual, and the error scale."""
    pre = a @ b_op
    scale = np.abs(a) @ np.abs(b_op)
    if bias is not None:
        pre = pre + bias
        scale = scale + np.abs(bias)
    out = ACTIVATIONS[act][1](torch.from_numpy(pre)).numpy()
    if residual is not None:
        out = out + residual
        scale = scale + np.abs(residual)
    return out, scale


def check(label, ours, ref, scale, tol):
    err = np.abs(ours.astype(np.float64) - ref) / (scale + 1e-30)
    worst = float(np.max(err)) if err.size else 0.0
    if not np.all(np.isfinite(ours)) or not worst <= tol:
        failures.append(f"{label}: max scaled error {worst:.3g} > {tol:.1g}")


def run_case(lib, dtype, trans, m, n, k, act, bias_on, res_mode, pad, seed):
    dt = DTYPES[dtype]
    rng = np.random.default_rng(seed)
    lda, ldc = k + pad[0], n + pad[2]
    b_rows, b_cols = (n, k) if trans == TRANS_T else (k, n)
    ldb = b_cols + pad[1]
    a = padded(rng, m, k, lda, dt)
    b = padded(rng, b_rows, b_cols, ldb, dt)
    bias = rng.uniform(-1, 1, n).astype(dt) if bias_on else None
    res_values = rng.uniform(-1, 1, (m, n)).astype(dt)
    # c's valid part starts as NaN (gemm must ignore it) unless it is the
    # residual; its padding holds a sentinel that must survive.
    c = np.full((m, ldc), 7.0, dtype=dt)
    c[:, :n] = res_values if res_mode == "alias" else np.nan
    residual = None
    if res_mode == "separate":
        residual = np.full((m, ldc), np.nan, dtype=dt)
        residual[:, :n] = res_values
    elif res_mode == "alias":
        residual = c
    label = (f"{dt.__name__} trans={'NT'[trans]} m={m} n={n} k={k} "
             f"act={ACTIVATIONS[act][0]} bias={bias_on} residual={res_mode} pad={pad}")
    try:
        kinds = call_gemm(lib, dtype, m, n, k, a, lda, b, ldb, trans, c, ldc, bias, act,
                          residual)
    except RuntimeError as e:
        failures.append(f"{label}: gemm failed: {e}")
        return
    if m == 1 and not (kinds[0] == 0 and kinds[1] == 1):
        failures.append(f"{label}: m == 1 did not take the gemv path (calls {kinds})")
    if m == 64 and not (kinds[0] == 1 and kinds[1] == 0):
        failures.append(f"{label}: m == 64 did not take the gemm path (calls {kinds})")
    if pad[2] and not np.all(c[:, n:] == 7.0):
        failures.append(f"{label}: wrote into c's padding (ldc > n)")
    a64 = a[:, :k].astype(np.float64)
    b64 = b[:, :b_cols].astype(np.float64)
    b_op = b64.T if trans == TRANS_T else b64  # [k, n]
    bias64 = None if bias is None else bias.astype(np.float64)
    res64 = None if res_mode == "none" else res_values.astype(np.float64)
    ref, scale = reference(a64, b_op, bias64, act, res64)
    tol = BASE_TOL[dtype] * max(1.0, k / 256)
    check(label, c[:, :n], ref, scale, tol)

    # Same inputs through the matrix-vector path: row 0 alone.
    if m == 64 and trans == TRANS_T:
        c1 = np.full((1, ldc), np.nan, dtype=dt)
        if res_mode == "alias":
            c1[0, :n] = res_values[0]
        res1 = {"none": None, "separate": residual[:1] if residual is not None else None,
                "alias": c1}[res_mode]
        kinds1 = call_gemm(lib, dtype, 1, n, k, a[:1], lda, b, ldb, trans, c1, ldc, bias,
                           act, res1)
        if kinds1[1] != 1:
            failures.append(f"{label}: row 0 alone did not take the gemv path")
        check(label + " [row 0 via gemv]", c1[:, :n], ref[:1], scale[:1], tol)


def run_gemm_ex_case(lib, dtype, ta, tb, m, n, k, pad, accumulate, seed):
    """c = op(a) . op(b) (+ old c): op(x) = x^T when stored transposed."""
    dt = DTYPES[dtype]
    rng = np.random.default_rng(seed)
    a_rows, a_cols = (k, m) if ta == TRANS_T else (m, k)
    b_rows, b_cols = (n, k) if tb == TRANS_T else (k, n)
    lda, ldb, ldc = a_cols + pad[0], b_cols + pad[1], n + pad[2]
    a = padded(rng, a_rows, a_cols, lda, dt)
    b = padded(rng, b_rows, b_cols, ldb, dt)
    old = rng.uniform(-1, 1, (m, n)).astype(dt)
    c = np.full((m, ldc), 7.0, dtype=dt)
    c[:, :n] = old if accumulate else np.nan
    label = (f"gemm_ex {dt.__name__} {'NT'[ta]}{'NT'[tb]} m={m} n={n} k={k} pad={pad} "
             f"accumulate={accumulate}")
    err = ctypes.create_string_buffer(512)
    rc = lib.bmrt_test_gemm_ex(dtype, THREADS, ta, tb, m, n, k, ptr(a), lda, ptr(b), ldb,
                               ptr(c), ldc, int(accumulate), err, len(err))
    if rc != 0:
        failures.append(f"{label}: failed: {err.value.decode()}")
        return
    a64 = a[:, :a_cols].astype(np.float64)
    b64 = b[:, :b_cols].astype(np.float64)
    a_op = a64.T if ta == TRANS_T else a64
    b_op = b64.T if tb == TRANS_T else b64
    ref = a_op @ b_op
    scale = np.abs(a_op) @ np.abs(b_op)
    if accumulate:
        ref = ref + old
        scale = scale + np.abs(old)
    if pad[2] and not np.all(c[:, n:] == 7.0):
        failures.append(f"{label}: wrote into c's padding (ldc > n)")
    check(label, c[:, :n], ref, scale, BASE_TOL[dtype] * max(1.0, k / 256))


def gemm_ex_cases(lib):
    cases = 0
    shapes = [(1, 37, 29, (0, 0, 0)), (7, 5, 64, (3, 1, 2)), (64, 128, 48, (0, 0, 0)),
              (33, 301, 131, (5, 7, 3)), (4, 6, 0, (1, 1, 1))]
    for dtype in (0, 1):
        for ta in (TRANS_N, TRANS_T):
            for tb in (TRANS_N, TRANS_T):
                for m, n, k, pad in shapes:
                    for accumulate in (False, True):
                        cases += 1
                        run_gemm_ex_case(lib, dtype, ta, tb, m, n, k, pad, accumulate,
                                         seed=1000 + cases)
    # A leading dimension too small for the stored layout fails loudly.
    a = np.zeros((4, 3), np.float32)
    c = np.zeros((3, 3), np.float32)
    err = ctypes.create_string_buffer(512)
    rc = lib.bmrt_test_gemm_ex(0, 1, TRANS_T, TRANS_N, 3, 3, 4, ptr(a), 2, ptr(a), 3,
                               ptr(c), 3, 0, err, len(err))
    if rc == 0 or b"lda=2" not in err.value:
        failures.append(f"gemm_ex with lda < m for A stored [k, m] did not fail: "
                        f"{err.value.decode()}")
    return cases + 1


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gemm_reference_test.py <libgemm_shim.so>")
    lib = load(sys.argv[1])
    # (n, k, pads of a/b/c): odd and small, exact multiples of 16 with minimal
    # leading dims, large enough to run threaded, and an empty sum.
    shapes = [(37, 29, (3, 5, 2)), (128, 64, (0, 0, 0)), (301, 781, (1, 7, 3)),
              (5, 0, (3, 2, 1))]
    combos = [(act, bias_on, res_mode) for act in ACTIVATIONS for bias_on in (False, True)
              for res_mode in ("none", "separate", "alias")]
    cases = 0
    for dtype in (0, 1):
        for trans in (TRANS_N, TRANS_T):
            for m in (1, 2, 3, 7, 64):
                for shape_index, (n, k, pad) in enumerate(shapes):
                    # Every epilogue x bias x residual on the first shape; on
                    # the others each epilogue once, bias/residual rotating.
                    chosen = combos if shape_index == 0 else [
                        c for i, c in enumerate(combos) if i % 6 == (cases + m) % 6]
                    for act, bias_on, res_mode in chosen:
                        cases += 1
                        run_case(lib, dtype, trans, m, n, k, act, bias_on, res_mode, pad,
                                 seed=cases)
    cases += gemm_ex_cases(lib)
    for f in failures[:40]:
        print("FAIL", f)
    print(f"gemm reference: {cases} cases, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
