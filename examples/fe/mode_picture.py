#!/usr/bin/env python3
"""Pictures of CalculiX's mode shapes (docs/fe-parts.md): the deformed part as an SVG, or a gmsh
file of the modes to turn and animate in gmsh.

usage: mode_picture.py JOB.frd --mode K [--svg OUT.svg] [--title TEXT] [--scale S]
       mode_picture.py JOB.frd --msh OUT.msh

JOB.frd: what a *FREQUENCY step with *NODE FILE U writes (link_clamped.inp, link_free.inp). --svg:
mode K's displacements on the part's outer faces, seen from the side and above (an oblique
view), coloured by the displacement's size, the undeformed part as a grey outline; the largest
displacement drawn is SCALE (default 0.12) times the part's length. --msh: gmsh's format 2.2 with
the nodes, the quadratic tetrahedra and one node-data view per mode (`gmsh OUT.msh`, then
Tools > Options > View > Vector display "Displacement" to see it move). Only the standard library.

The .frd blocks read (ccx 2.20, fixed columns): `    2C` nodes (` -1`, I10 node, 3 E12.5 x y z),
`    3C` elements (` -1` I10 element, I5 type; ` -2` the nodes, I10 each; type 6 = C3D10), and per
mode `  100CL` with the frequency in Hz, a `DISP` block (` -1` I10 node, 3 E12.5), ending ` -3`.
"""
import argparse
import math
import sys

SCALE = 0.12      # the largest displacement drawn, as a fraction of the part's length
VIEW = (35.0, 25.0)  # the view: azimuth about the vertical (z) axis and elevation, degrees
WIDTH, HEIGHT = 640, 240  # SVG size (px)
TET10_FACES = ((0, 1, 2), (0, 1, 3), (1, 2, 3), (0, 2, 3))  # corner-node faces of a tetrahedron


def floats(s, n):
    return [float(s[12 * i:12 * (i + 1)]) for i in range(n)]


def read_frd(path):
    nodes, elems, modes = {}, [], []
    with open(path) as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.startswith("    2C"):
            i += 1
            while not lines[i].startswith(" -3"):
                nodes[int(lines[i][3:13])] = floats(lines[i][13:], 3)
                i += 1
        elif l.startswith("    3C"):
            i += 1
            while not lines[i].startswith(" -3"):
                if lines[i].startswith(" -1"):
                    etype = int(lines[i][13:18])
                    conn = []
                    i += 1
                    while i < len(lines) and lines[i].startswith(" -2"):
                        s = lines[i][3:]
                        conn += [int(s[10 * k:10 * (k + 1)]) for k in range(len(s) // 10)]
                        i += 1
                    if etype == 6:
                        elems.append(conn)
                    continue
                i += 1
        elif l.startswith("  100CL"):
            freq = float(l[12:24])
            disp = {}
            i += 1
            is_disp = lines[i].startswith(" -4  DISP")
            while not lines[i].startswith(" -3"):
                if is_disp and lines[i].startswith(" -1"):
                    disp[int(lines[i][3:13])] = floats(lines[i][13:], 3)
                i += 1
            if is_disp:
                modes.append((freq, disp))
        i += 1
    if not nodes or not elems or not modes:
        raise ValueError(f"{path}: no nodes, C3D10 elements or displacement modes (a *FREQUENCY "
                         "step with *NODE FILE U writes them)")
    return nodes, elems, modes


def outer_faces(elems):
    count = {}
    for e in elems:
        for f in TET10_FACES:
            tri = tuple(e[k] for k in f)
            key = tuple(sorted(tri))
            count[key] = (count.get(key, (0, tri))[0] + 1, tri)
    return [tri for n, tri in count.values() if n == 1]


def colour(t):
    """blue (0) .. green .. red (1)"""
    t = min(max(t, 0.0), 1.0)
    r = int(255 * min(1.0, 2 * t))
    b = int(255 * min(1.0, 2 * (1 - t)))
    g = int(255 * (1 - abs(2 * t - 1)))
    return f"#{r:02x}{g:02x}{b:02x}"


def svg(nodes, elems, mode, title, scale):
    freq, disp = mode
    xs = [p[0] for p in nodes.values()]
    length = max(xs) - min(xs)
    umax = max(math.sqrt(sum(c * c for c in u)) for u in disp.values()) or 1.0
    s = scale * length / umax
    az, el = (math.radians(a) for a in VIEW)
    ca, sa, ce, se = math.cos(az), math.sin(az), math.cos(el), math.sin(el)

    def project(p):  # screen x, screen y (down), depth (larger: nearer)
        x, y, z = p
        sx = ca * x - sa * y
        depth = sa * x + ca * y
        return sx, -(ce * z - se * depth), ce * depth + se * z

    faces = outer_faces(elems)
    undeformed = {n: project(p) for n, p in nodes.items()}
    moved = {n: project([p[k] + s * disp.get(n, (0, 0, 0))[k] for k in range(3)])
             for n, p in nodes.items()}
    pts = list(undeformed.values()) + list(moved.values())
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    k = min((WIDTH - 20) / (x1 - x0), (HEIGHT - 50) / (y1 - y0 or 1))

    def xy(q):
        return f"{10 + k * (q[0] - x0):.1f},{40 + k * (q[1] - y0):.1f}"

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}">', f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="10" y="22" font-family="sans-serif" font-size="15">{title}: {freq:.2f} Hz</text>']
    for tri in faces:
        out.append(f'<polygon points="{" ".join(xy(undeformed[n]) for n in tri)}" fill="none" '
                   'stroke="#c8c8c8" stroke-width="0.5"/>')
    for tri in sorted(faces, key=lambda t: sum(moved[n][2] for n in t)):
        mag = sum(math.sqrt(sum(c * c for c in disp.get(n, (0, 0, 0)))) for n in tri) / (3 * umax)
        out.append(f'<polygon points="{" ".join(xy(moved[n]) for n in tri)}" fill="{colour(mag)}" '
                   'stroke="#303030" stroke-width="0.3"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def msh(nodes, elems, modes):
    ids = sorted(nodes)
    out = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$Nodes", str(len(ids))]
    out += [f"{n} {nodes[n][0]!r} {nodes[n][1]!r} {nodes[n][2]!r}" for n in ids]
    out += ["$EndNodes", "$Elements", str(len(elems))]
    # gmsh's 10-node tetrahedron (type 11) numbers its mid-side nodes 4..9 on edges 01 12 20 03 32 13
    # as CalculiX's C3D10 does except the last two (C3D10: 03 13 23)
    out += [f"{i + 1} 11 2 1 1 " + " ".join(str(n) for n in e[:8] + [e[9], e[8]])
            for i, e in enumerate(elems)]
    out += ["$EndElements"]
    for k, (freq, disp) in enumerate(modes):
        out += ["$NodeData", "1", f'"mode {k + 1}: {freq:.4g} Hz"', "1", f"{freq!r}", "3", str(k), "3",
                str(len(disp))]
        out += [f"{n} {u[0]!r} {u[1]!r} {u[2]!r}" for n, u in sorted(disp.items())]
        out += ["$EndNodeData"]
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("frd")
    ap.add_argument("--mode", type=int)
    ap.add_argument("--svg")
    ap.add_argument("--msh")
    ap.add_argument("--title", default="mode")
    ap.add_argument("--scale", type=float, default=SCALE)
    o = ap.parse_args(argv)
    try:
        nodes, elems, modes = read_frd(o.frd)
    except (OSError, ValueError, IndexError) as e:
        print(f"mode_picture.py: {o.frd}: {e}", file=sys.stderr)
        return 1
    if o.svg:
        if o.mode is None or not 1 <= o.mode <= len(modes):
            print(f"mode_picture.py: --mode 1..{len(modes)} needed", file=sys.stderr)
            return 2
        with open(o.svg, "w") as f:
            f.write(svg(nodes, elems, modes[o.mode - 1], o.title, o.scale))
    if o.msh:
        with open(o.msh, "w") as f:
            f.write(msh(nodes, elems, modes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
