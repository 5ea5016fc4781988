"""Checks a screenshot of a page with charts: the PNG decodes, and it is
not blank: enough of it differs from the page background, in the colours
of the chart lines (by default those of sibyl stress's --plot page, or
each of the hex colours given, at least 200 pixels of each).

Usage: plot_check.py screenshot.png [rrggbb ...]
"""
import struct
import sys
import zlib


def decode_png(path):
    """Returns (width, height, rows of (r, g, b) tuples) for 8-bit RGB or RGBA."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            upleft = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upleft
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else upleft)
                line[i] = (line[i] + pred) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def main():
    width, height, rows = decode_png(sys.argv[1])
    background = rows[0][0]
    pixels = [p for row in rows for p in row]
    drawn = sum(1 for p in pixels if p != background)
    # The throughput line is blue (#1f77b4), p99.9 red (#d62728): look for
    # pixels near them, so that text alone does not pass.
    def near(p, c):
        return all(abs(a - b) < 40 for a, b in zip(p, c))
    share = drawn / len(pixels)
    if len(sys.argv) > 2:
        counts = {}
        for colour in sys.argv[2:]:
            c = tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))
            counts[colour] = sum(1 for p in pixels if near(p, c))
        print("plot: %dx%d screenshot, %.1f%% drawn, pixels of each colour: %s" % (width, height, 100 * share, counts))
        if share < 0.02 or min(counts.values()) < 200:
            print("plot: the page looks blank or lacks a colour")
            sys.exit(1)
        return
    blue = sum(1 for p in pixels if near(p, (0x1F, 0x77, 0xB4)))
    red = sum(1 for p in pixels if near(p, (0xD6, 0x27, 0x28)))
    share = drawn / len(pixels)
    print("plot: %dx%d screenshot, %.1f%% drawn, %d blue and %d red line pixels" % (width, height, 100 * share, blue, red))
    if share < 0.02 or blue < 200 or red < 100:
        print("plot: the page looks blank or has no chart lines")
        sys.exit(1)


if __name__ == "__main__":
    main()
