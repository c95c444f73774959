"""BMBTOK1 token files written from their documented layout
(runtime/include/bmrt/tokens.h), so tests and benchmarks can make data
without going through our own writer."""

import struct

MAGIC = b"BMBTOK1\0"


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def write(path, ids, vocab):
    """Header (64 bytes): magic, version 1, bytes per id (2 when vocab <=
    65536, else 4), count, vocab, FNV-1a 64 of the id bytes, zeros; then the
    little-endian ids."""
    width = 2 if vocab <= 65536 else 4
    body = struct.pack("<%d%s" % (len(ids), "H" if width == 2 else "I"), *ids)
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<IIQQQ", 1, width, len(ids), vocab, fnv1a64(body))
                + bytes(24) + body)
