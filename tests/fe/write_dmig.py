#!/usr/bin/env python3
"""The matrices CalculiX wrote (JOB.dof, JOB.sti, JOB.mas) and the nodes of a *NODE data file, as a
Nastran punch file of DMIG entries KAAX (stiffness) and MAAX (mass), symmetric form (IFO 6, the
triangle CalculiX wrote), and GRID entries, in the three field formats (tests/fe/test_fe_read.c):

    write_dmig.py JOB NODES OUTDIR

OUTDIR/small.pch: 8-character fields (values rounded to what 8 characters hold); large.pch: DMIG*
and GRID* with 16-character fields; free.pch: commas and every value to 17 significant digits (read
back exactly), its GRID entries in free_bulk.dat instead of the punch file. Written independently of the
C readers: a second reading of CalculiX's files for the test to compare with."""
import os
import sys


def nastran_real(x, width):
    """x in at most width characters, as many digits as fit (Nastran's implied exponent: 1.5+3)"""
    if x == 0:
        return "0."
    for digits in range(17, 0, -1):
        m, e = ("%.*E" % (digits - 1, x)).split("E")
        if "." not in m:
            m += "."
        s = m + ("%+d" % int(e) if int(e) else "")
        if len(s) <= width:
            return s
    raise ValueError("%r does not fit in %d characters" % (x, width))


def read(job, nodes_file):
    dofs = [tuple(int(v) for v in line.split(".")) for line in open(job + ".dof") if line.strip()]
    mats = {}
    for name, ext in (("KAAX", ".sti"), ("MAAX", ".mas")):
        cols = {}
        for line in open(job + ext):
            if line.strip():
                r, c, x = line.split()
                cols.setdefault(int(c), []).append((int(r), float(x)))
        mats[name] = cols
    nodes = []
    for line in open(nodes_file):
        if line.strip() and line.strip()[0].isdigit():
            f = [v.strip() for v in line.split(",")]
            nodes.append((int(f[0]), [float(v) for v in f[1:4]]))
    return dofs, mats, nodes


def fixed_line(name, fields, width):
    """one line of fixed fields: the name, data fields of width, nothing in field 10"""
    return ("%-8s" % name) + "".join(("%*s" % (-width, f)) for f in fields)


def entry(fmt, name, data):
    """an entry of data fields in the format: lines"""
    if fmt == "free":
        per = 8
        lines = [",".join([name] + data[:per]) + ",+"]
        rest = data[per:]
        while rest:
            lines.append("+," + ",".join(rest[:per]))
            rest = rest[per:]
        if len(lines) == 1:
            lines[0] = lines[0][:-2]
        return lines
    per, width = (4, 16) if fmt == "large" else (8, 8)
    first = name + ("*" if fmt == "large" else "")
    lines = [fixed_line(first, data[:per], width)]
    rest = data[per:]
    while rest:
        lines.append(fixed_line("*" if fmt == "large" else "+", rest[:per], width))
        rest = rest[per:]
    return lines


def write(dofs, mats, nodes, fmt, out, bulk):
    width = {"small": 8, "large": 16, "free": 24}[fmt]
    real = (lambda x: "%.16E" % x) if fmt == "free" else (lambda x: nastran_real(x, width))
    grids = ["$ the nodes"]
    for nid, x in nodes:
        grids += entry(fmt, "GRID", [str(nid), ""] + [real(v) for v in x])
    lines = ["$ written by tests/fe/write_dmig.py"]
    for name, cols in mats.items():
        lines += entry(fmt, "DMIG", [name, "0", "6", "2", "0", "", "", ""])
        for c in sorted(cols):
            data = [name, str(dofs[c - 1][0]), str(dofs[c - 1][1]), ""]
            for r, x in cols[c]:
                data += [str(dofs[r - 1][0]), str(dofs[r - 1][1]), real(x), ""]
            lines += entry(fmt, "DMIG", data)
    if bulk:
        open(bulk, "w").write("\n".join(["BEGIN BULK"] + grids + ["ENDDATA"]) + "\n")
    else:
        lines += grids
    open(out, "w").write("\n".join(lines) + "\n")


def main():
    job, nodes_file, outdir = sys.argv[1:4]
    dofs, mats, nodes = read(job, nodes_file)
    for fmt in ("small", "large", "free"):
        write(dofs, mats, nodes, fmt, os.path.join(outdir, fmt + ".pch"),
              os.path.join(outdir, "free_bulk.dat") if fmt == "free" else None)


if __name__ == "__main__":
    main()
