"""Front end to MLIR: how long bmbc takes from a .bmb file to the bmb IR
after the front-end pipeline, and how the IR's size grows with depth.

Targets (the foundation issue): GPT-2 small well under 1 s, a 96-layer
GPT-3-175B configuration under 5 s, and IR size independent of the number of
layers (repeat stays rolled). There is no peer front end to run side by side
(PyTorch has no ahead-of-time front end for these files), so each figure is
printed against its target as a ratio; a ratio below 1 meets it.

Each timed run is one `bmbc FILE --model M --emit=mlir` process, end to end
(process start, parse, Sema, MLIRGen, verify, canonicalize, print).
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import benchlib  # noqa: E402

ROOT = os.environ.get("BMB_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BMB_BUILD_DIR", os.path.join(ROOT, "build"))
BMBC = os.path.join(BUILD, "bin", "bmbc")

CONFIGS = {
    # name: (model alias arguments, target seconds)
    "gpt2-small": ("", 1.0),
    "gpt3-175b": ("vocab = 50257, ctx = 2048, dim = 12288, layers = 96, heads = 96", 5.0),
}


def write_model(tmp, name, args):
    path = os.path.join(tmp, name + ".bmb")
    with open(path, "w") as f:
        f.write('import "models/gpt2.bmb"\n')
        f.write("model Bench = GPT2(%s)\n" % args)
    return path


def ir_size(path):
    out = subprocess.run([BMBC, path, "-I", ROOT, "--model", "Bench", "--emit=mlir"],
                         check=True, capture_output=True, text=True).stdout
    # Numbers (shapes, counts) legitimately change with the config.
    return len(out), len(re.sub(r"[0-9]+", "0", out))


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.devnull
    benchlib.wait_idle()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        print("%-12s %10s %10s %8s" % ("config", "median s", "target s", "ratio"))
        for name, (args, target) in CONFIGS.items():
            path = write_model(tmp, name, args)
            cmd = [BMBC, path, "-I", ROOT, "--model", "Bench", "--emit=mlir"]
            result = benchlib.measure(benchlib.run_command(cmd), reps=10, warmup=2)
            benchlib.record(out_path, "frontend", "bmb", name, "seconds", "s", result,
                            target=target)
            print("%-12s %10.3f %10.1f %8.3f" % (name, result["median"], target,
                                                 result["median"] / target))
            rows.append(result)

        print("\nIR size against depth (bytes; digits normalized):")
        sizes = {}
        for layers in (1, 12, 96, 960):
            path = write_model(tmp, "depth%d" % layers,
                               "dim = 768, heads = 12, layers = %d" % layers)
            raw, normalized = ir_size(path)
            sizes[layers] = normalized
            print("  layers %4d: %7d bytes (%d normalized)" % (layers, raw, normalized))
        flat = len(set(sizes.values())) == 1
        print("  independent of depth: %s" % ("yes" if flat else "NO"))
        benchlib.record(out_path, "frontend", "bmb", "depth-sweep", "ir-bytes", "B",
                        {"min": min(sizes.values()), "median": sizes[96],
                         "max": max(sizes.values()), "own_cpu_s": 0, "foreign_cpu_s": 0,
                         "noisy": False, "samples": [sizes[96]]},
                        independent_of_depth=flat)


if __name__ == "__main__":
    main()
