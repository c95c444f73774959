# Expands the checkpoint map of `bmbc --emit=mlir` output into the tensor
# names and shapes it stands for, and compares them with a list written by
# hf_keys.py from the real Hugging Face model:
#   * every rule that is not tied names a tensor of the file, with its shape;
#   * a tied rule names a tensor of the file or one save_pretrained omits;
#   * every tensor of the file comes from a rule, and every omitted one from
#     a tied rule.
# A rule "name" = transpose?(concat(@parts, axis = k)) is read with the
# semantics of bmb.checkpoint_map, independently of the compiler: per layer
# slice of stacked parts, "{i}" standing for the layer index.
# Usage: check_hf_names.py MAP_NAME HF_LIST < model.mlir
import re
import sys

PARAM = re.compile(r'bmb\.param @(\S+) : tensor<([0-9x]*)x?[a-z]+[0-9]*>.*?(?:stacked (\d+))?$')
RULE = re.compile(r'^\s*"([^"]*)" = (.*?),?$')


def parse_value(text):
    """-> (parts, axis, transpose, tied)."""
    tied = transpose = False
    if text.startswith("tied(") and text.endswith(")"):
        tied, text = True, text[5:-1]
    if text.startswith("transpose(") and text.endswith(")"):
        transpose, text = True, text[10:-1]
    axis = 0
    if text.startswith("concat(") and text.endswith(")"):
        items = [s.strip() for s in text[7:-1].split(",")]
        if items[-1].startswith("axis = "):
            axis = int(items.pop()[7:])
        text = ", ".join(items)
    parts = [p.strip() for p in text.split(",")]
    if not all(p.startswith("@") for p in parts):
        sys.exit(f"cannot read rule value {text!r}")
    return [p[1:] for p in parts], axis, transpose, tied


def main():
    map_name, hf_list = sys.argv[1], sys.argv[2]
    params, rules, in_map = {}, [], False
    for line in sys.stdin:
        line = line.rstrip("\n")
        m = PARAM.search(line)
        if m:
            dims = [int(d) for d in m.group(2).split("x") if d]
            params[m.group(1)] = (dims, int(m.group(3) or 0))
        if re.search(r'bmb\.checkpoint_map "%s" \[' % re.escape(map_name), line):
            in_map = True
        elif in_map and line.strip() == "]":
            in_map = False
        elif in_map:
            m = RULE.match(line)
            if not m:
                sys.exit(f"cannot read rule line {line!r}")
            rules.append((m.group(1),) + parse_value(m.group(2)))
    if not rules:
        sys.exit(f"no checkpoint map named {map_name!r} in the input")

    expected = {}  # external name -> (shape, tied)
    for external, parts, axis, transpose, tied in rules:
        shapes = [params[p][0][params[p][1]:] for p in parts]
        shape = list(shapes[0])
        shape[axis] = sum(s[axis] for s in shapes) if len(parts) > 1 else shape[axis]
        if transpose:
            shape.reverse()
        stacked = params[parts[0]][1]
        layers = params[parts[0]][0][0] if stacked else 1
        names = [external.replace("{i}", str(i)) for i in range(layers)] if stacked else [external]
        for name in names:
            expected[name] = (shape, tied)

    problems, file_count = [], 0
    hf = {}
    for line in open(hf_list):
        if line.startswith("#") or not line.strip():
            continue
        kind, name, *dims = line.split()
        hf[name] = (kind, [int(d) for d in dims])
    for name, (kind, shape) in sorted(hf.items()):
        file_count += kind == "file"
        if name not in expected:
            problems.append(f"{kind} tensor {name} {shape} comes from no rule")
        elif expected[name][0] != shape:
            problems.append(f"{name}: the map gives shape {expected[name][0]}, the file {shape}")
        elif kind == "omitted" and not expected[name][1]:
            problems.append(f"{name} is omitted by save_pretrained but its rule is not tied")
    for name, (shape, tied) in sorted(expected.items()):
        if name not in hf:
            problems.append(f"rule for {name} {shape}: no such tensor in the model")
    for p in problems:
        print("error:", p)
    print(f"{len(expected)} names from {len(rules)} rules; {file_count} tensors in the file; "
          f"{len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
