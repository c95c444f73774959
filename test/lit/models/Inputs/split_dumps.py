# Splits the output of `bmbc --dump-ir=after-all` into one file per dump.
import os, sys
text = open(sys.argv[1]).read()
os.makedirs(sys.argv[2], exist_ok=True)
parts = [p for p in text.split("// -----// IR Dump After ") if p.strip()]
for i, part in enumerate(parts):
    body = part.split("\n", 1)[1]
    with open(os.path.join(sys.argv[2], "%02d.mlir" % i), "w") as f:
        f.write(body)
print(len(parts), "dumps")
