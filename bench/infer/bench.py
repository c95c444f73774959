"""Batch-1 fp32 inference of GPT-2 small (124M): bmb's executable next to
plain PyTorch and next to the machine's own bounds, all in one run.

  machine  read-only bandwidth over a 1 GiB array and STREAM triad
           (bandwidth.cpp), sgemm 2048^3 through OpenBLAS (sgemm.cpp); both
           built here with g++ -O3 -march=native -fopenmp, 2 threads.
  pytorch  gpt2_torch.py: GPT-2 in plain PyTorch (preallocated KV cache,
           last-row LM head), torch.set_num_threads(2), inference_mode;
           checked against Hugging Face's GPT2LMHeadModel before timing.
  bmb      bmbc bench/infer/gpt2.bmb --job bench_gpt2_small, run as
           EXE --load CKPT --prompt-ids <128 ids> --max-tokens 64
               --ignore-eos --sampling greedy --profile --threads 2;
           its figures are the ones --profile prints.
PyTorch and the bound programs run with OMP_WAIT_POLICY=PASSIVE unless
already set, ours with libgomp's default (see below). Both sides load the same random weights (a Hugging Face
GPT2LMHeadModel checkpoint built once into $BMB_BUILD_DIR/bench/infer-work)
and decode the same greedy 64 tokens: prefill of the 128-token prompt gives
the first, then 63 decode steps. Prefill is reported in prompt tokens/s,
decode in steps/s. Bounds: decode reads every weight once per token (all
parameters but the unused rows of the position table), so read bandwidth /
weight bytes is its ceiling; prefill is nearly all GEMM, so FLOPs / sgemm
rate is.

Needs transformers and safetensors: run with .venv-ref/bin/python
(bench/run.sh does).
"""

import gc
import os
import re
import statistics
import subprocess
import sys
import tempfile

# OpenMP threads spin after each parallel region, and Debian's torch also
# runs OpenBLAS's own (pthread) threads, which spin after each GEMM; on 2
# shared cores the spinners take turns by time slice and every small op of a
# prefill then costs ~10 ms (PyTorch measured at 80 vs 470 prompt tokens/s;
# ours, on OpenBLAS-OpenMP, 146 vs 373 on a loaded machine). Both sides and
# the bound programs run with sleeping waiters unless the caller chose
# otherwise; set before torch is first imported. Our executable runs with
# libgomp's default (spin briefly, then sleep) -- what a user gets -- or with
# $BMB_OMP_WAIT_POLICY: sleeping waiters cost it a futex wake-up per
# parallel region, ~70 regions per decoded token (28.9 vs 49.1 tokens/s).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
OURS_ENV = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
if os.environ.get("BMB_OMP_WAIT_POLICY"):
    OURS_ENV["OMP_WAIT_POLICY"] = os.environ["BMB_OMP_WAIT_POLICY"]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BMB_ROOT", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("BMB_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import benchlib  # noqa: E402

THREADS = 2
PROMPT_LEN = 128
MAX_TOKENS = 64
GEMM_N = 2048
BW_GIB = 1.0
CONFIG = "gpt2-small"
MIB = float(1 << 20)


def parse_profile(stderr):
    """The figures of --profile (stderr, after the kernel table):
      prefill: N tokens in S s (X tokens/s)
      decode: N tokens in S s (X tokens/s)
      peak RSS: X MiB (planned: params A MiB + state B MiB + activations C MiB = D MiB)
    Returns a dict; raises ValueError naming the line it could not find."""
    num = r"([0-9.eE+-]+)"
    out = {}
    for phase in ("prefill", "decode"):
        m = re.search(r"%s:\s*(\d+)\s+tokens in\s+%s\s*s\s*\(%s\s*tokens/s\)" % (phase, num, num),
                      stderr)
        if not m:
            raise ValueError("no '%s: N tokens in S s (X tokens/s)' line in --profile output"
                             % phase)
        # tokens/s from N and S: the printed rate is rounded to 0.1.
        n, sec = int(m.group(1)), float(m.group(2))
        out[phase + "_tokens"], out[phase + "_s"] = n, sec
        out[phase + "_tps"] = n / sec if sec > 0 else float(m.group(3))
    m = re.search(r"peak RSS:\s*%s\s*MiB\s*\(planned:\s*params\s*%s\s*MiB\s*\+\s*state\s*%s\s*MiB"
                  r"\s*\+\s*activations\s*%s\s*MiB\s*=\s*%s\s*MiB\)" % ((num,) * 5), stderr)
    if not m:
        raise ValueError("no 'peak RSS: X MiB (planned: ...)' line in --profile output")
    for i, k in enumerate(("rss", "params", "state", "activations", "planned")):
        out[k + "_mib"] = float(m.group(i + 1))
    return out


def figures(measured, values):
    """A benchlib result whose samples are `values` (rates read from a
    program's output), keeping the foreign CPU of the run that made them."""
    r = dict(measured)
    r.update(samples=values, min=min(values), median=statistics.median(values), max=max(values))
    return r


def rates(measured, work):
    """A benchlib timing result turned into work/second figures."""
    return figures(measured, [work / s for s in measured["samples"]])


def build_tools(scratch):
    """g++ bandwidth.cpp and sgemm.cpp into scratch; returns their paths."""
    tools = {}
    for name, libs in (("bandwidth", []), ("sgemm", ["-lopenblas"])):
        exe = os.path.join(scratch, name)
        subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", "-o", exe,
                        os.path.join(HERE, name + ".cpp")] + libs, check=True)
        tools[name] = exe
    return tools


def run_tool(cmd):
    """Runs a bound program once; returns (its result lines by name, the
    benchlib measurement of that one run)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS), OPENBLAS_NUM_THREADS=str(THREADS))
    lines = []
    fn = lambda: lines.append(subprocess.run(cmd, check=True, capture_output=True,  # noqa: E731
                                             text=True, env=env).stdout)
    measured = benchlib.measure(fn, reps=1, warmup=0)
    by = {}
    for line in lines[0].splitlines():
        name, value = line.split()
        by.setdefault(name, []).append(float(value))
    return by, measured


def machine_bounds(tools, out, rows):
    by, m = run_tool([tools["bandwidth"], str(THREADS), str(BW_GIB), "7"])
    bw = {}
    for metric in ("read", "triad"):
        rows.append(benchlib.record(out, "infer", "machine", "%gGiB" % BW_GIB, metric + "-bw",
                                    "GB/s", figures(m, by[metric])))
        bw[metric] = rows[-1]["value"]
    by, m = run_tool([tools["sgemm"], str(GEMM_N), "5"])
    rows.append(benchlib.record(out, "infer", "machine", "n=%d" % GEMM_N, "sgemm", "GFLOP/s",
                                figures(m, by["sgemm"])))
    return bw["read"], rows[-1]["value"]


def checkpoint():
    """The HF GPT-2 small checkpoint with random weights (built once)."""
    import configs
    import hf_reference
    c = configs.get(CONFIG)
    return c, hf_reference.ensure(c, os.path.join(BUILD, "bench", "infer-work"),
                                  references=False)


def pytorch_side(c, ckpt, prompt, out, rows):
    """Checks the plain model against HF, then times prefill and decode.
    Returns (the plain model's 64 greedy tokens, weight counts)."""
    import torch
    import transformers
    from safetensors.torch import load_file
    import hf_reference
    from gpt2_torch import PlainGPT2
    torch.set_num_threads(THREADS)
    with torch.inference_mode():
        model = PlainGPT2(load_file(os.path.join(ckpt, "model.safetensors")), c["layers"],
                          c["heads"], c["ctx"])
        hf = transformers.GPT2LMHeadModel.from_pretrained(
            ckpt, local_files_only=True, attn_implementation="eager").float().eval()
        ref, _ = hf_reference.causal_reference(hf, prompt.tolist(), 3)
        del hf
        gc.collect()
        ours = [model.forward(prompt, 0)]
        for k in range(3):
            ours.append(model.forward(torch.tensor([int(ref[k].argmax())]), PROMPT_LEN + k))
        err = max(float((a[0] - torch.from_numpy(r)).abs().max() / abs(r).max())
                  for a, r in zip(ours, ref))
        print("pytorch: plain GPT-2 vs Hugging Face, prefill + 3 decode steps: max rel err "
              "%.1e" % err)
        if err > 1e-4:
            raise SystemExit("infer: the plain PyTorch GPT-2 does not match Hugging Face")
        tokens = model.generate(prompt, MAX_TOKENS)
        first = tokens[0]

        def decode():
            t = first
            for pos in range(PROMPT_LEN, PROMPT_LEN + MAX_TOKENS - 1):
                t = int(model.forward(torch.tensor([t]), pos).argmax())

        r = benchlib.measure(lambda: model.forward(prompt, 0), reps=5, warmup=1)
        rows.append(benchlib.record(out, "infer", "pytorch", CONFIG, "prefill", "tok/s",
                                    rates(r, PROMPT_LEN), threads=THREADS))
        r = benchlib.measure(decode, reps=3, warmup=1)
        rows.append(benchlib.record(out, "infer", "pytorch", CONFIG, "decode", "tok/s",
                                    rates(r, MAX_TOKENS - 1), threads=THREADS))
        n_params = sum(t.numel() for t in model.params())
    return tokens, n_params


def compile_ours(scratch):
    """Returns (exe, None) or (None, the reason it is not available)."""
    bmbc = os.path.join(BUILD, "bin", "bmbc")
    if not os.access(bmbc, os.X_OK):
        return None, "no %s" % bmbc
    exe = os.path.join(scratch, "gpt2_small")
    p = subprocess.run([bmbc, os.path.join(HERE, "gpt2.bmb"), "--job", "bench_gpt2_small",
                        "-I", ROOT, "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "bmbc exit %d: %s" % (p.returncode, (p.stderr.strip() or "?").splitlines()[0])
    return exe, None


def ours_side(exe, ckpt, prompt, torch_tokens, out, rows):
    """Runs our executable 3 times (+1 warm-up); returns the last profile."""
    cmd = [exe, "--load", ckpt, "--prompt-ids", ",".join(str(int(t)) for t in prompt),
           "--max-tokens", str(MAX_TOKENS), "--ignore-eos", "--sampling", "greedy", "--profile",
           "--threads", str(THREADS), "--output", "ids"]
    runs = []

    def run():
        p = subprocess.run(cmd, capture_output=True, text=True, env=OURS_ENV)
        if p.returncode != 0:
            err = [l for l in p.stderr.splitlines() if "error" in l] or p.stderr.splitlines()
            raise RuntimeError("exit %d: %s" % (p.returncode, (err or ["?"])[0].strip()))
        runs.append((parse_profile(p.stderr), [int(x) for x in re.findall(r"\d+", p.stdout)]))
    m = benchlib.measure(run, reps=3, warmup=1)
    profiles = [r[0] for r in runs[1:]]
    got = runs[-1][1][-MAX_TOKENS:]
    same = got == torch_tokens
    print("bmb: greedy tokens %s PyTorch's" % ("equal" if same else "DIFFER from"))
    for phase, n in (("prefill", PROMPT_LEN), ("decode", MAX_TOKENS - 1)):
        if profiles[0][phase + "_tokens"] != n:
            print("bmb: note: --profile counts %d %s tokens, PyTorch's figure is over %d"
                  % (profiles[0][phase + "_tokens"], phase, n))
        rows.append(benchlib.record(out, "infer", "bmb", CONFIG, phase, "tok/s",
                                    figures(m, [p[phase + "_tps"] for p in profiles]),
                                    threads=THREADS, tokens_match=same))
    return profiles[-1]


def summary(rows, c, n_params, read_bw, gemm, prof, why_not):
    v = {(r["system"], r["metric"]): r["value"] for r in rows}
    d, L, V, T = c["dim"], c["layers"], c["vocab"], PROMPT_LEN
    weight_bytes = 4 * (n_params - (c["ctx"] - 1) * d)
    decode_bound = read_bw * 1e9 / weight_bytes
    flops = L * (24 * T * d * d + 2 * d * T * (T + 1)) + 2 * d * V
    prefill_bound = T / (flops / (gemm * 1e9))
    kv_mib = 4 * L * 2 * c["ctx"] * d / MIB
    print("\n== GPT-2 small, batch 1, fp32, %d threads, OMP_WAIT_POLICY: PyTorch %s, bmb %s "
          "(shared machine: see foreign CPU above)"
          % (THREADS, os.environ["OMP_WAIT_POLICY"], OURS_ENV.get("OMP_WAIT_POLICY", "default")))
    print("%-22s %12s %12s %10s" % ("", "bmb", "PyTorch", "bmb/PyTorch"))
    for metric, label in (("prefill", "prefill %d tok/s" % T),
                          ("decode", "decode tok/s")):
        pt, ours = v.get(("pytorch", metric)), v.get(("bmb", metric))
        print("%-22s %12s %12.1f %10s" % (label, "%.1f" % ours if ours else "-", pt,
                                          "%.2fx" % (ours / pt) if ours else "-"))
    print("decode bound: %.1f GB/s read / %.1f MB of weights per token = %.1f tok/s"
          % (read_bw, weight_bytes / 1e6, decode_bound))
    print("prefill bound: %.1f GFLOP (128-token prefill, last-row logits) / %.1f GFLOP/s = "
          "%.1f tok/s" % (flops / 1e9, gemm, prefill_bound))
    for system, name in (("pytorch", "PyTorch"), ("bmb", "bmb")):
        if (system, "decode") in v:
            print("%-8s decode at %4.0f%% of the bandwidth bound, prefill at %4.0f%% of the GEMM "
                  "bound" % (name, 100 * v[(system, "decode")] / decode_bound,
                             100 * v[(system, "prefill")] / prefill_bound))
            if v[(system, "decode")] > decode_bound:
                print("         (above the bound: the bandwidth figure was disturbed, or the "
                      "weights stay partly in a large last-level cache)")
    noisy = sorted("%s %s" % (r["system"], r["metric"]) for r in rows if r["noisy"])
    if noisy:
        print("NOISY (other processes used the CPU meanwhile; re-run): %s" % ", ".join(noisy))
    print("expected memory: weights %.1f MiB + KV cache (ctx %d) %.1f MiB"
          % (4 * n_params / MIB, c["ctx"], kv_mib))
    if prof:
        print("bmb peak RSS %.1f MiB; planned %.1f MiB (params %.1f + state %.1f + activations "
              "%.1f)" % (prof["rss_mib"], prof["planned_mib"], prof["params_mib"],
                         prof["state_mib"], prof["activations_mib"]))
    else:
        print("ours: not available (%s)" % why_not)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.devnull
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        import safetensors  # noqa: F401
    except ImportError as e:
        print("infer: skipped: %s (run with .venv-ref/bin/python; scripts/setup-venv.sh)" % e)
        return 0
    import numpy as np
    c, ckpt = checkpoint()
    prompt = np.random.default_rng(0).integers(0, c["vocab"], PROMPT_LEN)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bmb-bench-infer-") as scratch:
        tools = build_tools(scratch)
        exe, why_not = compile_ours(scratch)
        benchlib.wait_idle()
        read_bw, gemm = machine_bounds(tools, out, rows)
        import torch
        tokens, n_params = pytorch_side(c, ckpt, torch.from_numpy(prompt).long(), out, rows)
        prof = None
        if exe:
            try:
                prof = ours_side(exe, ckpt, prompt, tokens, out, rows)
            except (RuntimeError, ValueError) as e:
                why_not = str(e)
    summary(rows, c, n_params, read_bw, gemm, prof, why_not)
    benchlib.ratio_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
