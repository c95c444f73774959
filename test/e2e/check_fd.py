#!/usr/bin/env python3
"""The compiler's gradients of whole transformer blocks, by finite differences.

usage: check_fd.py EXE WORKDIR

EXE is a train executable of test/e2e/fd.bmb (its job, the file's name,
selects the row of JOBS below): a small model around one GPT-2 `Block`
with a tied head, whose loss is the fused classifier (fd_block), or two
`LlamaBlock`s with a biased head, whose loss is bmb.cross_entropy on the
model's logits (fd_llama), of stdlib/nn.bmb, compiled with
`precision = fp64`, so every tensor of the program is float64.

Why this is independent of the gradient code: the gradient is the
compiler's reverse pass (bmb-autodiff's VJP rules, lowered to the backward
kernels: the `forward_backward` entry), dumped with --dump-grads. The loss
that the finite differences difference is the `evaluate` entry, the
forward alone (@loss), run by --eval-only: no VJP rule and no backward
kernel takes part in it. In float64 the two must agree far beyond what
float32 could show (1e-6 relative here; a wrong rule is off by O(1)).

The check, at two points: the fresh parameters of --seed (biases 0, norm
weights 1: what training starts from) and the same perturbed by random
noise (every bias and norm weight away from its initializer, attention
away from uniform, so no term of the gradient vanishes by symmetry):

  1. data: a token file of exactly one batch, B*T + 1 uniform ids;
  2. gradient: `--load P --steps 1 --lr 0 --dump-grads G --save S`; the
     update at lr 0 must leave every weight bit-identical (S == P), weight
     decay included, so G is the gradient at P;
  3. loss: `--eval-only --load P --eval-split all` evaluates that one batch
     (its B*T targets) and prints the loss with 17 significant digits; it
     must equal the loss the training step logged (the two entries'
     forwards agree) and the loss of the same model in numpy
     (fd_reference.py) to 1e-8, so the function differentiated is the
     model's;
  4. per parameter tensor: a random unit direction v, the central
     difference of L along v against <G, v>, relative error <= 1e-6; and
     the same for three single coordinates (the largest |G| and two random
     ones). The difference is the fourth-order central one,
       (8 (L(P + h v) - L(P - h v)) - (L(P + 2h v) - L(P - 2h v))) / 12h,
     h = 3e-4: its truncation error (h^4; the fresh point's residual
     stream is only ~0.03 wide, so a bias step of 1e-3 is already far) and
     rounding error (1e-16 / h) are both around 1e-12, where the plain
     (L(P + h v) - L(P - h v)) / 2h cannot get under 1e-10 for any h. A derivative under 1e-4 of the
     largest gradient entry (GPT-2's key bias, whose gradient is zero:
     softmax ignores a constant added to every score) is compared
     absolutely, against 1e-6 of that bound.
"""

import os
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fd_reference  # noqa: E402
import harness  # noqa: E402
import tokfile  # noqa: E402

# The train jobs of test/e2e/fd.bmb, as the test must know them.
JOBS = {
    "fd_block": dict(batch=2, seq=16, vocab=64),
    "fd_llama": dict(batch=2, seq=16, vocab=64),
}
THREADS = ["--threads", "2"]
TOL = 1e-6
H = 3e-4           # step along a unit direction (fourth-order differences)
SMALL = 1e-4       # below SMALL * max |G|, derivatives are compared absolutely
COORDS = 3         # single coordinates per tensor
NOISE = 0.3        # std of the perturbation of the second point
REF_TOL = 1e-8     # the loss against fd_reference.py (float32 eps/scale/base)


class Run:
    def __init__(self, exe, workdir, fails):
        self.exe = exe
        self.name = os.path.basename(exe)
        self.job = JOBS[self.name]
        self.dir = os.path.join(workdir, "fd-" + os.path.basename(exe))
        os.makedirs(self.dir, exist_ok=True)
        self.fails = fails
        B, T, V = self.job["batch"], self.job["seq"], self.job["vocab"]
        self.targets = B * T
        self.data = os.path.join(self.dir, "one-batch.tok")
        self.ids = np.random.default_rng(11).integers(0, V, B * T + 1).tolist()
        tokfile.write(self.data, self.ids, V)
        self.evals = 0

    def exe_run(self, label, *args):
        cmd = [self.exe, "--data", self.data, "--order", "sequential", "--val-fraction", "0"] \
            + THREADS + [str(a) for a in args]
        p = harness.run(cmd, quiet=True)
        if p.returncode != 0:
            harness.die("%s: exit %s\n$ %s\n%s" % (label, p.returncode, " ".join(cmd),
                                                   harness.tail(p.stderr)))
        return p

    def write(self, name, params):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        save_file({k: np.ascontiguousarray(v) for k, v in params.items()},
                  os.path.join(d, "model.safetensors"))
        return d

    def loss(self, point, check_targets=False):
        p = self.exe_run("--eval-only", "--eval-only", "--load", point, "--eval-split", "all")
        self.evals += 1
        out = dict(line.split() for line in harness.text(p.stdout).strip().splitlines())
        if check_targets:
            err = harness.text(p.stderr)
            self.fails.check("(whole file split, %d targets)" % self.targets in err,
                             "--eval-only did not evaluate exactly the one batch of %d "
                             "targets: %s" % (self.targets, err.strip()))
        return float(out["loss"])

    def fresh(self, seed):
        """The fresh parameters of --seed, as a checkpoint: one step at lr 0
        (the update is the identity, checked in gradient())."""
        out = os.path.join(self.dir, "fresh")
        self.exe_run("fresh parameters", "--seed", seed, "--steps", 1, "--lr", 0,
                     "--save", out)
        return os.path.join(out, "step-0000001")

    def gradient(self, label, point):
        """G at `point`, after checking that the lr-0 update left it as it was."""
        grads = os.path.join(self.dir, label + "-grads.safetensors")
        saved = os.path.join(self.dir, label + "-after")
        log = os.path.join(self.dir, label + "-log.jsonl")
        for f in (grads, log):
            if os.path.exists(f):
                os.remove(f)
        self.exe_run("--dump-grads", "--load", point, "--steps", 1, "--lr", 0,
                     "--dump-grads", grads, "--save", saved, "--log", log)
        before = load_file(os.path.join(point, "model.safetensors"))
        after = load_file(os.path.join(saved, "step-0000001", "model.safetensors"))
        for name, w in sorted(before.items()):
            self.fails.check(w.dtype == np.float64,
                             "%s is %s, not float64 (precision = fp64)" % (name, w.dtype))
            self.fails.check(np.array_equal(w, after[name]),
                             "%s: an update at lr 0 changed it (max |change| %.3e)"
                             % (name, float(np.abs(after[name] - w).max())))
        import json
        with open(log) as f:
            logged = [json.loads(line) for line in f if '"loss"' in line][0]["loss"]
        return before, load_file(grads), logged

    def check_point(self, label, point):
        params, grads, logged = self.gradient(label, point)
        base = self.loss(point, check_targets=True)
        self.fails.check(abs(base - logged) <= 1e-8 * abs(base),
                         "%s: --eval-only loss %.17g vs the step's logged loss %.9g"
                         % (label, base, logged))
        ref = fd_reference.loss(self.name, params, self.ids, self.job["batch"], self.job["seq"])
        self.fails.check(abs(base - ref) <= REF_TOL * abs(ref),
                         "%s: loss %.17g vs the numpy reference %.17g (rel %.1e > %g)"
                         % (label, base, ref, abs(base - ref) / abs(ref), REF_TOL))
        print("%s: loss %.17g, numpy reference %.17g (%d tensors)"
              % (label, base, ref, len(params)))
        rng = np.random.default_rng(5)
        floor = SMALL * max(float(np.abs(g).max()) for g in grads.values())
        worst = 0.0
        for name in sorted(params):
            p, g = params[name], grads.get(name)
            if g is None or g.shape != p.shape or g.dtype != np.float64:
                self.fails.add("%s: --dump-grads has %s" % (
                    name, "nothing" if g is None else "%s %s" % (g.dtype, g.shape)))
                continue
            v = rng.standard_normal(p.shape)
            v /= np.linalg.norm(v)
            dirs = [("random direction", v)]
            flat = [int(np.abs(g).argmax())] + rng.choice(p.size, COORDS - 1,
                                                          replace=False).tolist()
            for i in flat:
                e = np.zeros(p.size)
                e[i] = 1.0
                dirs.append(("coordinate %s" % (np.unravel_index(i, p.shape),),
                             e.reshape(p.shape)))
            for what, d in dirs:
                L = {k: self.perturbed(params, name, p + k * H * d) for k in (-2, -1, 1, 2)}
                fd = (8 * (L[1] - L[-1]) - (L[2] - L[-2])) / (12 * H)
                an = float(np.sum(g * d))
                err = abs(fd - an) / max(abs(an), floor)
                worst = max(worst, err)
                ok = err <= TOL
                print("  %-22s %-26s <G,v> %+.10e  FD %+.10e  rel %.1e%s"
                      % (name, what, an, fd, err, "" if ok else "  FAIL"))
                self.fails.check(ok, "%s %s %s: <G,v> %.10e vs FD %.10e (rel %.1e > %g)"
                                 % (label, name, what, an, fd, err, TOL))
        print("%s: worst relative error %.1e over %d loss evaluations" % (label, worst, self.evals))

    def perturbed(self, params, name, value):
        return self.loss(self.write("probe", dict(params, **{name: value})))


def main():
    if len(sys.argv) != 3:
        harness.die(__doc__.split("\n\n")[1])
    exe, workdir = sys.argv[1], sys.argv[2]
    if os.path.basename(exe) not in JOBS:
        harness.die("%s is not one of the jobs of fd.bmb (%s)" % (exe, ", ".join(JOBS)))
    fails = harness.Failures("check_fd " + os.path.basename(exe))
    r = Run(exe, workdir, fails)
    fresh = r.fresh(seed=3)
    r.check_point("fresh", fresh)
    rng = np.random.default_rng(7)
    noisy = {k: v + NOISE * rng.standard_normal(v.shape)
             for k, v in load_file(os.path.join(fresh, "model.safetensors")).items()}
    r.check_point("perturbed", r.write("perturbed", noisy))
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main())
