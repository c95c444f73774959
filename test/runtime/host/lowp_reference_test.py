"""bmrt/lowp.h against torch: the fp32 <-> bf16 / fp16 conversions bit for
bit (torch's c10::BFloat16 and Half round to nearest even, as numpy's
float16 does), and the reduced-input GEMMs against fp64 matmuls of the
torch-rounded operands. Usage: lowp_reference_test.py <lowp_shim.so>"""

import ctypes
import sys

import numpy as np
import torch

from shimlib import F32, I64, INT, P, bind, call, check, expect, failures, ptr

lib = bind(ctypes.CDLL(sys.argv[1]), {
    "bmrt_test_convert": [INT, INT, P, P, I64, P, INT],
    "bmrt_test_gemm_lowp": [INT, INT, I64, I64, I64, P, I64, P, I64, INT, P, I64, P, INT, P, INT],
    "bmrt_test_gemm_ex_lowp": [INT, INT, INT, INT, I64, I64, I64, P, I64, P, I64, P, I64, INT,
                               P, INT],
})
rng = np.random.default_rng(7)


def convert(kind, x, threads=4):
    out = np.empty(x.shape, dtype=np.uint16 if kind in (0, 2) else np.float32)
    call(lib.bmrt_test_convert, kind, threads, ptr(out), ptr(x), x.size)
    return out


# fp32 inputs: every exponent (random mantissas), the boundaries of each
# format, ties (the halfway points between two bf16 / fp16 values), fp16's
# subnormals and overflow, signed zeros, infinities, NaN.
bits = rng.integers(0, 2**32, size=300_000, dtype=np.uint64).astype(np.uint32)
special = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e30, -1e30,
                    2.0**-14, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0000001, 3 * 2.0**-26,
                    5.960464477539063e-08, 6.097555160522461e-05, 3.4e38, -3.4e38,
                    np.inf, -np.inf, np.nan, 1e-45, -1e-45], dtype=np.float32)
ties = np.arange(0x3f800000, 0x3f800000 + 2**17, 0x8000 // 4, dtype=np.uint32)  # bf16 ties
ties16 = (np.arange(0, 2**15, dtype=np.uint32) << 13) + 0x1000 + 0x38000000   # fp16 ties
x = np.concatenate([bits.view(np.float32), special, ties.view(np.float32),
                    ties16.view(np.float32)]).astype(np.float32)
nan = np.isnan(x)

ours = convert(0, x)
ref = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
expect(f"fp32 -> bf16: {x.size} values equal torch's bits (NaN aside)",
       np.array_equal(ours[~nan], ref[~nan]))
expect("fp32 -> bf16: NaN stays NaN", bool(np.all(((ours[nan] & 0x7f80) == 0x7f80) &
                                                 ((ours[nan] & 0x7f) != 0))))
ours = convert(2, x)
ref = torch.from_numpy(x).half().view(torch.int16).numpy().view(np.uint16)
npref = x.astype(np.float16).view(np.uint16)
expect(f"fp32 -> fp16: {x.size} values equal torch's bits (NaN aside)",
       np.array_equal(ours[~nan], ref[~nan]))
expect("fp32 -> fp16: equals numpy's float16 too", np.array_equal(ours[~nan], npref[~nan]))
expect("fp32 -> fp16: NaN stays NaN", bool(np.all(((ours[nan] & 0x7c00) == 0x7c00) &
                                                 ((ours[nan] & 0x3ff) != 0))))

every = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
for kind, dtype, name in ((1, torch.bfloat16, "bf16"), (3, torch.float16, "fp16")):
    ours = convert(kind, every)
    ref = torch.from_numpy(every.view(np.int16)).view(dtype).float().numpy()
    same = (ours.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(ours) & np.isnan(ref))
    expect(f"{name} -> fp32: all 65536 bit patterns equal torch's", bool(same.all()))
expect("one thread gives the same bits", np.array_equal(convert(0, x, 1), convert(0, x, 4)))


def rounded(a, p):
    t = torch.from_numpy(a).to(torch.bfloat16 if p == 0 else torch.float16)
    return t.double()


# gemm_lowp: a [m, k] (lda > k), b [n, k] (T) or [k, n] (N), bias, GELU:
# equal to the fp64 product of the rounded operands up to fp32 accumulation.
for p, name in ((0, "bf16"), (1, "fp16")):
    for m, n, k, tb in ((64, 48, 96, 1), (33, 17, 40, 0), (1, 24, 32, 0), (2, 24, 32, 1)):
        lda = k + 3
        a = rng.standard_normal((m, lda)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        c = np.empty((m, n), dtype=np.float32)
        call(lib.bmrt_test_gemm_lowp, p, 2, m, n, k, ptr(a), lda, ptr(b), b.shape[1], tb,
             ptr(c), n, ptr(bias), 2, )
        ra, rb = rounded(np.ascontiguousarray(a[:, :k]), p), rounded(b, p)
        prod = ra @ (rb.T if tb else rb) + torch.from_numpy(bias).double()
        ref = torch.nn.functional.gelu(prod)
        check(f"gemm_lowp {name} m={m} n={n} k={k} trans_b={tb}: rounded-operand product",
              c, ref, 2e-6)
        exact = torch.nn.functional.gelu(torch.from_numpy(a[:, :k]).double() @
                                         (torch.from_numpy(b).double().T if tb else
                                          torch.from_numpy(b).double()) +
                                         torch.from_numpy(bias).double())
        diff = (torch.from_numpy(c).double() - exact).abs().max().item() / exact.abs().max()
        expect(f"gemm_lowp {name} m={m}: the inputs were rounded (differs from fp32 by "
               f"{diff:.1e})", diff > (1e-4 if p == 0 else 1e-6))

# gemm_ex_lowp: the backward GEMMs' shapes (dx = dy . w, dw += dy^T . x).
for p, name in ((0, "bf16"), (1, "fp16")):
    for ta, tb, m, n, k in ((0, 0, 40, 24, 56), (1, 0, 56, 24, 40), (0, 1, 8, 16, 24)):
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        c0 = rng.standard_normal((m, n)).astype(np.float32)
        c = c0.copy()
        call(lib.bmrt_test_gemm_ex_lowp, p, 2, ta, tb, m, n, k, ptr(a), a.shape[1], ptr(b),
             b.shape[1], ptr(c), n, 1)
        ra, rb = rounded(a, p), rounded(b, p)
        ref = (ra.T if ta else ra) @ (rb.T if tb else rb) + torch.from_numpy(c0).double()
        check(f"gemm_ex_lowp {name} trans_a={ta} trans_b={tb}: accumulates the rounded product",
              c, ref, 2e-6)

try:
    call(lib.bmrt_test_gemm_lowp, 7, 1, 2, 2, 2, ptr(np.ones(4, np.float32)), 2,
         ptr(np.ones(4, np.float32)), 2, 1, ptr(np.ones(4, np.float32)), 2, None, 0)
    expect("an invalid precision fails", False)
except RuntimeError as e:
    expect(f"an invalid precision fails loudly ({e})", "invalid precision" in str(e))

print("FAILED: " + ", ".join(failures) if failures else "all lowp checks passed")
sys.exit(1 if failures else 0)
