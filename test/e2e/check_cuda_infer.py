#!/usr/bin/env python3
"""The --target=cuda infer executable against Hugging Face and the host
executable (ctest label cuda-gpu; test/runtime/cuda/CMakeLists.txt).

  check_cuda_infer.py PROBE CUDA_EXE HOST_EXE CONFIG WORKDIR

Without a GPU (PROBE, bmb-cuda-probe, fails) it prints why and exits 77,
which ctest reports as Skipped. With one, on CONFIG's Hugging Face
checkpoint and prompt (hf_reference.py, shared with check_infer.py):
 - check_infer's numerics on CUDA_EXE: the logits of the prefill and of every
   greedy decode step within 1e-4 (max|ours - ref| / max|ref|) of HF, and
   HF's greedy tokens (encoders: hidden states and pooled output to 1e-4).
   The device's GEMMs are strict fp32 (no TF32), so only the summation order
   differs from HF's and the host's: ~1e-6 relative on these configs, the
   tolerance the host executable meets too. The prompts are chosen with a
   greedy margin (hf_reference.MIN_MARGIN) far above that, so the argmax
   cannot flip.
 - the same command through both executables: the greedy ids printed by
   --output ids are identical; configs with a tokenizer also print the same
   text for a text prompt; an encoder's printed vector agrees to 1e-4.
 - the decode step as a CUDA graph (the default; cuda/decode_graph.h)
   against the same steps launched one by one ($BMB_CUDA_GRAPHS=0: the same
   kernels with the position in device memory): the greedy ids and every
   step's dumped logits are bitwise equal, and the graph run said nothing
   about falling back. A graph replays the launches it captured, so any
   difference is a bug (a value baked in at capture, a stale pointer).
 - the draw of the next token inside the decode graph (temperature, top_k,
   top_p from a seed): the same ids with $BMB_CUDA_GRAPHS=0.
 - top_k and top_p sampling (a seed, temperature 0.8): the ids the device
   draws (its radix sort, cut and draw: cuda/sampling_sorted.cu) are the
   host executable's. Both draw with the same Philox uniform; the logits
   differ by ~1e-6 relative, so a token could differ only where the draw's
   target or top_p's cut lands within that of a cumulative boundary (about
   1e-5 per token on these vocabularies); the seed is fixed, so a pass is
   reproducible.
"""

import glob
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_infer  # noqa: E402
import configs  # noqa: E402
import harness  # noqa: E402
import hf_reference  # noqa: E402

SKIPPED = 77


def same_stdout(fails, label, cuda_exe, host_exe, args):
    """Runs both executables with args; fails unless both succeed and print
    the same bytes. Returns the two stdouts (or None)."""
    ours = check_infer.run_ours(fails, "cuda " + label, [cuda_exe] + args)
    ref = check_infer.run_ours(fails, "host " + label, [host_exe] + args)
    if not ours or not ref:
        return None
    return ours.stdout, ref.stdout


def check_graph_decode(c, cuda_exe, d, workdir, fails):
    if c["family"] == "bert":
        return  # an encoder has no decode step
    prompt = ",".join(str(t) for t in np.load(os.path.join(d, "prompt_ids.npy")).tolist())
    runs = {}
    for label, graphs in (("graphs", "1"), ("launch by launch", "0")):
        out = os.path.join(workdir, "cuda-decode-%s-%s" % (c["name"], graphs))
        shutil.rmtree(out, ignore_errors=True)
        cmd = [cuda_exe, "--load", d, "--prompt-ids", prompt, "--dump", out, "--output", "ids",
               "--sampling", "greedy", "--ignore-eos", "--max-tokens", str(c["steps"])]
        print("$ BMB_CUDA_GRAPHS=%s %s" % (graphs, " ".join(cmd)), flush=True)
        p = subprocess.run(cmd, capture_output=True, timeout=600,
                           env=dict(os.environ, BMB_CUDA_GRAPHS=graphs))
        if p.returncode != 0:
            fails.add("decode %s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
            return
        runs[label] = (p, out)
    (g, gout), (s, sout) = runs["graphs"], runs["launch by launch"]
    fails.check(b"launch by launch" not in g.stderr and b"host positions" not in g.stderr,
                "the graph run fell back: %s" % harness.tail(g.stderr))
    fails.check(g.stdout == s.stdout, "graph decode ids %r, launch by launch %r"
                % (harness.text(g.stdout), harness.text(s.stdout)))
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(sout, "step*_logits.npy")))
    fails.check(len(files) >= c["steps"], "launch by launch dumped %d logits" % len(files))
    same = 0
    for f in files:
        a, b = np.load(os.path.join(gout, f)), np.load(os.path.join(sout, f))
        if fails.check(a.shape == b.shape and a.tobytes() == b.tobytes(),
                       "%s: graph decode logits differ from launch by launch (max |diff| %s)"
                       % (f, np.max(np.abs(a - b)) if a.shape == b.shape else "shape")):
            same += 1
    print("graph decode vs launch by launch: %d of %d steps' logits bitwise equal"
          % (same, len(files)))
    # The draw inside the graph (its settings, seed and Philox counter in
    # device memory): the same ids as the same kernels launched one by one.
    for mode in (["--sampling", "temperature"], ["--sampling", "top_k", "--top-k", "40"],
                 ["--sampling", "top_p", "--top-p", "0.9"]):
        ids = {}
        for graphs in ("1", "0"):
            cmd = [cuda_exe, "--load", d, "--prompt-ids", prompt, "--output", "ids",
                   "--temperature", "0.8", "--seed", "11", "--ignore-eos",
                   "--max-tokens", str(c["steps"])] + mode
            p = subprocess.run(cmd, capture_output=True, timeout=600,
                               env=dict(os.environ, BMB_CUDA_GRAPHS=graphs))
            if not fails.check(p.returncode == 0, "%s, BMB_CUDA_GRAPHS=%s: exit %s\n%s"
                               % (mode[1], graphs, p.returncode, harness.tail(p.stderr))):
                break
            ids[graphs] = p.stdout
        if len(ids) == 2:
            print("%s ids: graphs %r, launch by launch %r" % (mode[1], harness.text(ids["1"]).strip(),
                                                             harness.text(ids["0"]).strip()))
            fails.check(ids["1"] == ids["0"], "%s: the draw inside the graph gives other ids "
                        "than launch by launch" % mode[1])


def compare_with_host(c, cuda_exe, host_exe, d, fails):
    prompt = ",".join(str(t) for t in np.load(os.path.join(d, "prompt_ids.npy")).tolist())
    if c["family"] == "bert":
        outs = same_stdout(fails, "encoder vector", cuda_exe, host_exe,
                           ["--load", d, "--prompt-ids", prompt])
        if outs:
            ours, ref = (np.array(harness.text(o).split(), dtype=np.float64) for o in outs)
            e = harness.rel_err(ours, ref) if ours.shape == ref.shape else float("inf")
            print("encoder vector: cuda vs host, max rel err %.2e" % e)
            fails.check(e <= harness.TOL, "the printed vectors differ: cuda %s, host %s (max "
                        "rel err %.2e > %.0e)" % (ours.shape, ref.shape, e, harness.TOL))
        return
    greedy = ["--sampling", "greedy", "--ignore-eos", "--max-tokens", str(c["steps"])]
    outs = same_stdout(fails, "greedy ids", cuda_exe, host_exe,
                       ["--load", d, "--prompt-ids", prompt, "--output", "ids"] + greedy)
    if outs:
        print("greedy ids: cuda %r, host %r" % (harness.text(outs[0]).strip(),
                                                harness.text(outs[1]).strip()))
        fails.check(outs[0] == outs[1], "the greedy ids differ from the host executable's")
    for mode in (["--sampling", "top_k", "--top-k", "40"],
                 ["--sampling", "top_p", "--top-p", "0.9"]):
        sampled = mode + ["--temperature", "0.8", "--seed", "7", "--ignore-eos",
                          "--max-tokens", str(c["steps"])]
        outs = same_stdout(fails, mode[1] + " ids", cuda_exe, host_exe,
                           ["--load", d, "--prompt-ids", prompt, "--output", "ids"] + sampled)
        if outs:
            print("%s ids: cuda %r, host %r" % (mode[1], harness.text(outs[0]).strip(),
                                                harness.text(outs[1]).strip()))
            fails.check(outs[0] == outs[1], "the %s ids differ from the host executable's"
                        % mode[1])
    if c["tokenizer"]:
        outs = same_stdout(fails, "text", cuda_exe, host_exe,
                           ["--load", d, "--tokenizer", d, "--prompt", hf_reference.TEXT_PROMPT,
                            "--output", "text"] + greedy)
        if outs:
            fails.check(outs[0] == outs[1], "the generated text differs from the host "
                        "executable's: cuda %r, host %r" % (outs[0], outs[1]))


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    probe, cuda_exe, host_exe = (os.path.abspath(a) for a in argv[1:4])
    c = configs.get(argv[4])
    workdir = os.path.abspath(argv[5])
    p = harness.run([probe], quiet=True)
    if p.returncode != 0:
        print("skipped: no usable GPU: %s" % harness.tail(p.stderr + p.stdout, 3))
        return SKIPPED
    for exe in (cuda_exe, host_exe):
        if not os.access(exe, os.X_OK):
            harness.die("%s is not an executable" % exe)
    fails = harness.Failures("check_cuda_infer %s" % c["name"])
    d = hf_reference.ensure(c, workdir)
    check_infer.run_numerics(c, cuda_exe, d, fails, "cuda", [])
    compare_with_host(c, cuda_exe, host_exe, d, fails)
    check_graph_decode(c, cuda_exe, d, workdir, fails)
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
