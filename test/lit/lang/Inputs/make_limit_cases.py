# Writes the inputs of sema-limits.test into the directory argv[1].
import os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)

def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)

# 10 members of 10 members ... 8 levels deep: 10^8 instances.
wide = ["layer L0(n: int) {\n  param w: [n] = zeros\n  forward(x) = x\n}"]
for i in range(1, 9):
    members = "\n".join("  m%d = L%d(n)" % (j, i - 1) for j in range(10))
    wide.append("layer L%d(n: int) {\n%s\n  forward(x) = x\n}" % (i, members))
wide.append("model M(ctx: int = 4) {\n  top = L8(4)\n  forward(x: [B, T, 4]) = top(x)\n}")
write("wide.bmb", "\n".join(wide) + "\n")

# Each layer calls its child 200 times: 200^4 regions.
calls = ["layer L0(n: int) {\n  param w: [n] = zeros\n  forward(x) = x * 2.0\n}"]
for i in range(1, 5):
    body = "\n".join("    x = a(x)" for _ in range(200))
    calls.append("layer L%d(n: int) {\n  a = L%d(n)\n  forward(x) {\n%s\n    return x\n  }\n}"
                 % (i, i - 1, body))
calls.append("model M(ctx: int = 4) {\n  top = L4(4)\n  forward(x: [B, T, 4]) = top(x)\n}")
write("calls.bmb", "\n".join(calls) + "\n")

# A chain of 100 distinct layers, each holding the next.
deep = ["layer D100(n: int) {\n  forward(x) = x\n}"]
for i in range(99, -1, -1):
    deep.append("layer D%d(n: int) {\n  inner = D%d(n)\n  forward(x) = inner(x)\n}" % (i, i + 1))
deep.append("model M(ctx: int = 4) {\n  top = D0(4)\n  forward(x: [B, T, 4]) = top(x)\n}")
write("deep.bmb", "\n".join(deep) + "\n")
