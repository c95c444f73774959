#!/usr/bin/env python3
"""Plots the loss curve of a train executable's JSONL metrics log as a PNG.

usage: plot-loss.py METRICS.jsonl OUT.png [--title TEXT]

Reads the lines with "loss" (training, drawn as a line) and "val_loss"
(held-out evaluation, drawn as dots) against "step". Python's standard
library only (zlib for the PNG), so a fresh machine needs nothing more: the
text uses a small built-in 5x7 bitmap font.
"""
import json
import math
import struct
import sys
import zlib

W, H = 800, 480
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50
WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (220, 220, 220)
BLUE, ORANGE = (31, 119, 180), (230, 110, 20)

# 5x7 glyphs, one string of 7 rows of 5 bits per character.
FONT = {
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    ".": "00000 00000 00000 00000 00000 01100 01100",
    "-": "00000 00000 00000 01110 00000 00000 00000",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000",
    "/": "00001 00010 00010 00100 01000 01000 10000",
    "_": "00000 00000 00000 00000 00000 00000 11111",
    " ": "00000 00000 00000 00000 00000 00000 00000",
    "a": "00000 00000 01110 00001 01111 10001 01111",
    "b": "10000 10000 10110 11001 10001 10001 11110",
    "c": "00000 00000 01110 10000 10000 10001 01110",
    "d": "00001 00001 01101 10011 10001 10001 01111",
    "e": "00000 00000 01110 10001 11111 10000 01110",
    "f": "00110 01001 01000 11100 01000 01000 01000",
    "g": "00000 01111 10001 10001 01111 00001 01110",
    "h": "10000 10000 10110 11001 10001 10001 10001",
    "i": "00100 00000 01100 00100 00100 00100 01110",
    "j": "00010 00000 00110 00010 00010 10010 01100",
    "k": "10000 10000 10010 10100 11000 10100 10010",
    "l": "01100 00100 00100 00100 00100 00100 01110",
    "m": "00000 00000 11010 10101 10101 10001 10001",
    "n": "00000 00000 10110 11001 10001 10001 10001",
    "o": "00000 00000 01110 10001 10001 10001 01110",
    "p": "00000 00000 11110 10001 11110 10000 10000",
    "q": "00000 00000 01101 10011 01111 00001 00001",
    "r": "00000 00000 10110 11001 10000 10000 10000",
    "s": "00000 00000 01110 10000 01110 00001 11110",
    "t": "01000 01000 11100 01000 01000 01001 00110",
    "u": "00000 00000 10001 10001 10001 10011 01101",
    "v": "00000 00000 10001 10001 10001 01010 00100",
    "w": "00000 00000 10001 10001 10101 10101 01010",
    "x": "00000 00000 10001 01010 00100 01010 10001",
    "y": "00000 00000 10001 10001 01111 00001 01110",
    "z": "00000 00000 11111 00010 00100 01000 11111",
}


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(WHITE * (w * h))

    def set(self, x, y, color):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = 3 * (y * self.w + x)
            self.px[i:i + 3] = bytes(color)

    def line(self, x0, y0, x1, y1, color, width=1):
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for s in range(steps + 1):
            x = round(x0 + (x1 - x0) * s / steps)
            y = round(y0 + (y1 - y0) * s / steps)
            for dx in range(width):
                for dy in range(width):
                    self.set(x + dx - width // 2, y + dy - width // 2, color)

    def dot(self, x, y, color, r=3):
        for dx in range(-r, r + 1):
            for dy in range(-r, r + 1):
                if dx * dx + dy * dy <= r * r:
                    self.set(x + dx, y + dy, color)

    def text(self, x, y, s, color=BLACK, scale=1):
        """Left-aligned at (x, y) = top-left; unknown characters print as spaces."""
        for ch in s.lower():
            rows = FONT.get(ch, FONT[" "]).split()
            for r, bits in enumerate(rows):
                for c, bit in enumerate(bits):
                    if bit == "1":
                        for sx in range(scale):
                            for sy in range(scale):
                                self.set(x + c * scale + sx, y + r * scale + sy, color)
            x += 6 * scale

    def png(self):
        raw = b"".join(b"\x00" + bytes(self.px[3 * y * self.w:3 * (y + 1) * self.w])
                       for y in range(self.h))

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def nice_ticks(lo, hi, n=6):
    span = hi - lo if hi > lo else 1.0
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=10 * mag)
    first = math.ceil(lo / step) * step
    ticks = []
    t = first
    while t <= hi + 1e-9 * span:
        ticks.append(t)
        t += step
    return ticks


def fmt(v):
    return f"{v:g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.1e}"


def main():
    args = sys.argv[1:]
    title = "loss"
    if "--title" in args:
        i = args.index("--title")
        title = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    train, val = [], []
    with open(args[0]) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{args[0]}:{n}: not JSON: {e}")
            if "step" not in rec:
                continue
            if isinstance(rec.get("loss"), (int, float)):
                train.append((rec["step"], rec["loss"]))
            if isinstance(rec.get("val_loss"), (int, float)):
                val.append((rec["step"], rec["val_loss"]))
    points = train + val
    if not points:
        sys.exit(f"{args[0]}: no lines with step and loss")
    x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
    y0, y1 = min(p[1] for p in points), max(p[1] for p in points)
    if x1 == x0:
        x1 = x0 + 1
    pad = 0.05 * (y1 - y0 if y1 > y0 else 1.0)
    y0, y1 = max(0.0, y0 - pad), y1 + pad
    cv = Canvas(W, H)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(x):
        return LEFT + round((x - x0) / (x1 - x0) * pw)

    def sy(y):
        return TOP + ph - round((y - y0) / (y1 - y0) * ph)

    for t in nice_ticks(y0, y1):
        cv.line(LEFT, sy(t), LEFT + pw, sy(t), GREY)
        label = fmt(t)
        cv.text(LEFT - 8 - 6 * len(label), sy(t) - 3, label)
    for t in nice_ticks(x0, x1):
        cv.line(sx(t), TOP, sx(t), TOP + ph, GREY)
        label = fmt(t)
        cv.text(sx(t) - 3 * len(label), TOP + ph + 8, label)
    cv.line(LEFT, TOP, LEFT, TOP + ph, BLACK)
    cv.line(LEFT, TOP + ph, LEFT + pw, TOP + ph, BLACK)
    for (a, b), (c, d) in zip(train, train[1:]):
        cv.line(sx(a), sy(b), sx(c), sy(d), BLUE, width=2)
    for a, b in val:
        cv.dot(sx(a), sy(b), ORANGE)
    cv.text(LEFT, 12, title, scale=2)
    cv.text(LEFT + pw // 2 - 12, H - 20, "step")
    legend_x = LEFT + pw - 130
    cv.line(legend_x, 20, legend_x + 20, 20, BLUE, width=2)
    cv.text(legend_x + 26, 17, "train loss")
    if val:
        cv.dot(legend_x + 10, 32, ORANGE)
        cv.text(legend_x + 26, 29, "eval loss")
    with open(args[1], "wb") as f:
        f.write(cv.png())
    print(f"plot-loss: wrote {args[1]} ({len(train)} training points, {len(val)} eval points)")


if __name__ == "__main__":
    main()
