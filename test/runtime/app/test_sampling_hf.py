"""Our sampling (runtime/app/sampling.cpp) against Hugging Face's warpers.

Usage: test_sampling_hf.py LIBSAMPLING_HOOK.so

For random logits (also with ties and -inf entries) the set of tokens our
filter keeps must equal the set transformers 4.40's TemperatureLogitsWarper /
TopKLogitsWarper / TopPLogitsWarper keep (their scores stay finite), and the
probabilities must equal softmax of the warped scores. Top-p compares
cumulative float32 sums with p in transformers and float64 sums in ours, so a
token whose cumulative probability lies within rounding of p may differ; such
cases are recognized and counted, never silently passed. Then the draws: our
Philox draws must follow the HF distribution (chi-square), reproduce with the
same seed, and differ with another.
"""
import ctypes
import math
import sys

import numpy as np
import torch
from transformers.generation.logits_process import (
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

GREEDY, TEMPERATURE, TOP_K, TOP_P = 0, 1, 2, 3
MODE_NAMES = {GREEDY: "greedy", TEMPERATURE: "temperature", TOP_K: "top_k", TOP_P: "top_p"}

lib = ctypes.CDLL(sys.argv[1])
f32p = ctypes.POINTER(ctypes.c_float)
f64p = ctypes.POINTER(ctypes.c_double)
i32p = ctypes.POINTER(ctypes.c_int32)
u32p = ctypes.POINTER(ctypes.c_uint32)
lib.bmrt_test_filter.restype = ctypes.c_int64
lib.bmrt_test_filter.argtypes = [ctypes.c_int, ctypes.c_double, ctypes.c_int64, ctypes.c_double,
                                 f32p, ctypes.c_int64, f64p, ctypes.c_char_p, ctypes.c_int64]
lib.bmrt_test_sample_steps.restype = ctypes.c_int64
lib.bmrt_test_sample_steps.argtypes = [ctypes.c_int, ctypes.c_double, ctypes.c_int64,
                                       ctypes.c_double, ctypes.c_uint64, ctypes.c_uint64,
                                       ctypes.c_int64, f32p, ctypes.c_int64, i32p,
                                       ctypes.c_char_p, ctypes.c_int64]
lib.bmrt_test_philox.restype = None
lib.bmrt_test_philox.argtypes = [u32p, u32p, u32p]

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def ours_filter(mode, logits, temperature=1.0, k=0, p=1.0):
    logits = np.ascontiguousarray(logits, dtype=np.float32)
    probs = np.zeros(len(logits), dtype=np.float64)
    err = ctypes.create_string_buffer(512)
    kept = lib.bmrt_test_filter(mode, temperature, k, p, logits.ctypes.data_as(f32p),
                                len(logits), probs.ctypes.data_as(f64p), err, len(err))
    if kept < 0:
        raise RuntimeError(err.value.decode())
    return kept, probs


def ours_sample(mode, logits, seed, first, count, temperature=1.0, k=0, p=1.0):
    logits = np.ascontiguousarray(logits, dtype=np.float32)
    tokens = np.zeros(count, dtype=np.int32)
    err = ctypes.create_string_buffer(512)
    n = lib.bmrt_test_sample_steps(mode, temperature, k, p, seed, first, count,
                                   logits.ctypes.data_as(f32p), len(logits),
                                   tokens.ctypes.data_as(i32p), err, len(err))
    if n < 0:
        raise RuntimeError(err.value.decode())
    return tokens


def hf_filter(mode, logits, temperature=1.0, k=0, p=1.0):
    """(kept mask, probabilities) as transformers' generate() would sample."""
    scores = torch.tensor(np.asarray(logits, dtype=np.float32))[None, :]
    if mode == GREEDY:
        kept = np.zeros(len(logits), dtype=bool)
        kept[int(torch.argmax(scores[0]))] = True  # torch: first maximal index
        return kept, kept.astype(np.float64)
    scores = TemperatureLogitsWarper(temperature)(None, scores)
    if mode == TOP_K:
        scores = TopKLogitsWarper(k)(None, scores)
    if mode == TOP_P:
        scores = TopPLogitsWarper(p)(None, scores)
    probs = torch.softmax(scores, dim=-1)[0].double().numpy()
    return torch.isfinite(scores[0]).numpy(), probs  # removed tokens are -inf


def topp_ambiguous(logits, temperature, p, tolerance=1e-5):
    """Tokens whose top-p decision hinges on rounding: the probability mass
    strictly above them (in float64) is within `tolerance` of p."""
    x = np.asarray(logits, dtype=np.float64) / temperature
    probs = np.exp(x - x.max())
    probs /= probs.sum()
    order = np.argsort(-probs, kind="stable")
    above = np.concatenate([[0.0], np.cumsum(probs[order])[:-1]])
    ambiguous = np.zeros(len(logits), dtype=bool)
    ambiguous[order] = np.abs(above - p) < tolerance
    return ambiguous


def compare(mode, logits, temperature=1.0, k=0, p=1.0, label=""):
    """Returns True when the case was decided by rounding (top-p only)."""
    what = f"{label} {MODE_NAMES[mode]} T={temperature} k={k} p={p} vocab={len(logits)}"
    kept_count, ours = ours_filter(mode, logits, temperature, k, p)
    hf_kept, hf_probs = hf_filter(mode, logits, temperature, k, p)
    our_kept = ours > 0
    check(kept_count == our_kept.sum(), f"{what}: kept count {kept_count} vs mask {our_kept.sum()}")
    differ = our_kept != hf_kept
    if differ.any():
        if mode == TOP_P and topp_ambiguous(logits, temperature, p)[differ].all():
            print("  rounding:", what, "tokens", np.nonzero(differ)[0][:5])
            return True
        check(False, f"{what}: kept sets differ at tokens {np.nonzero(differ)[0][:10]}")
        return False
    check(np.allclose(ours, hf_probs, rtol=1e-4, atol=1e-7),
          f"{what}: probabilities differ by {np.abs(ours - hf_probs).max():.3g}")
    check(abs(ours.sum() - 1) < 1e-9, f"{what}: our probabilities sum to {ours.sum()}")
    return False


def test_filters_match_hf():
    rng = np.random.default_rng(1234)
    cases = ambiguous = 0
    for trial in range(300):
        vocab = int(rng.choice([1, 2, 3, 7, 50, 257, 1000]))
        logits = rng.normal(0, float(rng.choice([0.5, 2.0, 4.0])), vocab).astype(np.float32)
        if trial % 5 == 1:
            logits = np.round(logits)  # many ties
        if trial % 7 == 2 and vocab > 3:
            logits[rng.choice(vocab, vocab // 3, replace=False)] = -np.inf
        temperature = float(rng.choice([0.3, 0.7, 1.0, 1.5, 3.0]))
        compare(GREEDY, logits, label=f"trial {trial}")
        compare(TEMPERATURE, logits, temperature, label=f"trial {trial}")
        for k in (1, 2, 5, 40, 2000):
            compare(TOP_K, logits, temperature, k=k, label=f"trial {trial}")
        if trial % 5 == 1:
            continue  # top-p among exact ties depends on torch.sort's order of equal keys
        for p in (0.0, 0.1, 0.5, 0.9, 0.95, 1.0):
            cases += 1
            ambiguous += compare(TOP_P, logits, temperature, p=p, label=f"trial {trial}")
    print(f"top-p: {cases} cases, {ambiguous} decided by rounding at the boundary")
    check(ambiguous <= cases // 50, f"too many rounding-boundary top-p cases: {ambiguous}")


def test_hand_picked():
    # top-k keeps every token tied with the k-th largest, as TopKLogitsWarper.
    _, probs = ours_filter(TOP_K, [1, 3, 3, 2], k=1)
    check(list(probs > 0) == [False, True, True, False], f"top-k ties: {probs}")
    # greedy: the lowest index among equal maxima.
    _, probs = ours_filter(GREEDY, [0, 5, 2, 5])
    check(probs[1] == 1.0, f"greedy tie: {probs}")
    # top-p with p = 0 still keeps the most likely token.
    kept, probs = ours_filter(TOP_P, [0.0, 1.0, 0.5], p=0.0)
    check(kept == 1 and probs[1] == 1.0, f"top-p p=0: {probs}")
    for bad, args in (("nan", dict(mode=TEMPERATURE, logits=[0.0, float("nan")])),
                      ("all -inf", dict(mode=TOP_P, logits=[-np.inf, -np.inf], p=0.9)),
                      ("temperature 0", dict(mode=TEMPERATURE, logits=[0.0, 1.0], temperature=0.0)),
                      ("k = 0", dict(mode=TOP_K, logits=[0.0, 1.0], k=0))):
        try:
            ours_filter(**args)
            check(False, f"{bad}: accepted")
        except RuntimeError as e:
            print(f"{bad}: error '{e}'")


def chi_square(tokens, probs):
    n = len(tokens)
    counts = np.bincount(tokens, minlength=len(probs))
    kept = probs > 0
    expected = n * probs[kept]
    stat = float(((counts[kept] - expected) ** 2 / expected).sum())
    return stat, int(kept.sum()) - 1, int(counts[~kept].sum())


def test_draws_follow_hf_distribution():
    rng = np.random.default_rng(99)
    for mode, kwargs in ((TEMPERATURE, dict(temperature=1.3)), (TOP_K, dict(k=6, temperature=0.8)),
                         (TOP_P, dict(p=0.9, temperature=1.0))):
        logits = rng.normal(0, 1.5, 30).astype(np.float32)
        _, hf_probs = hf_filter(mode, logits, **kwargs)
        tokens = ours_sample(mode, logits, seed=2024, first=0, count=40000, **kwargs)
        stat, dof, outside = chi_square(tokens, hf_probs)
        # 5 standard deviations above the mean of the chi-square distribution.
        limit = dof + 5 * math.sqrt(2 * dof)
        print(f"{MODE_NAMES[mode]}: chi2 {stat:.1f} with {dof} dof (limit {limit:.1f})")
        check(outside == 0, f"{MODE_NAMES[mode]}: {outside} draws outside the HF-kept set")
        check(stat < limit, f"{MODE_NAMES[mode]}: chi2 {stat:.1f} >= {limit:.1f}")


def test_reproducible():
    logits = np.random.default_rng(5).normal(0, 1, 100).astype(np.float32)
    a = ours_sample(TOP_P, logits, seed=7, first=0, count=64, p=0.95)
    b = ours_sample(TOP_P, logits, seed=7, first=0, count=64, p=0.95)
    c = ours_sample(TOP_P, logits, seed=8, first=0, count=64, p=0.95)
    tail = ours_sample(TOP_P, logits, seed=7, first=32, count=32, p=0.95)
    check((a == b).all(), "same seed, different tokens")
    check((a != c).any(), "seeds 7 and 8 gave the same 64 tokens")
    check((a[32:] == tail).all(), "a draw depends on more than (seed, step)")


def test_philox_known_answers():
    # Random123's tests/kat_vectors, philox4x32 10: counter[4] key[2] -> result[4].
    vectors = [
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for ctr, key, expected in vectors:
        c = (ctypes.c_uint32 * 4)(*ctr)
        k = (ctypes.c_uint32 * 2)(*key)
        out = (ctypes.c_uint32 * 4)()
        lib.bmrt_test_philox(c, k, out)
        check(list(out) == expected, f"philox({ctr}, {key}) = {[hex(x) for x in out]}")


for test in (test_philox_known_answers, test_hand_picked, test_filters_match_hf,
             test_draws_follow_hf_distribution, test_reproducible):
    test()
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("OK")
