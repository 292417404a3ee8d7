#!/usr/bin/python3
"""A 40-digit reference for the linearization of the URDF chains of bench/chain_urdf.py (issue 69).

The chain's forward dynamics qdd = M(q)^-1 (u - h(q, v) - c v) (u the joint efforts u_<joint>, c
the joints' <dynamics damping>, gravity 9.81 along -z: docs/mechanism-reference.md, "URDF robots")
linearized at a point (q, v, u = 0): the lower halves of A (d qdd / d q, d qdd / d v: n x 2n) and
of B (d qdd / d u = M^-1: n x n). Derived here from the URDF's semantics alone, in mpmath at
DPS digits, independently of mblin's code:

- the URDF text of bench/chain_urdf.py is read with xml.etree (joint origins, axes, inertials,
  damping; the numbers as the doubles a reader parses);
- inverse dynamics tau = ID(q, v, qdd) = M qdd + h by a recursive Newton-Euler in link frames
  (the base accelerating at +g instead of gravity);
- M column by column as ID(q, 0, e_j) without gravity; qdd0 = M^-1 (-h - c v) at the point;
- d ID / d q_j and d ID / d v_j at (q, v, qdd0) by complex step in mpc numbers (step H = 1e-40:
  the truncation error is ~H^2, and nothing cancels);
- A's lower half = -M^-1 [dID/dq, dID/dv + diag(c)], B's lower half = M^-1, by one LU factor of M.

`--check` tests the method on cases with independent answers: the compound pendulum (N = 1) in
closed form; a planar double pendulum (both axes y) against its Lagrangian closed form
differentiated by mp.diff; the spatial N = 2 chain at q = 0 against the hand derivation
(M = diag(I + m a^2 + I + m (L + a)^2, I + m a^2), K = diag((m a + m (L + a)) g, m a g)), its
gravity forces at a moved point against the gradient of its potential; the complex step against
central differences at 2 DPS digits; M's symmetry; and the written files against a recomputation
at DPS - 10 digits (every written digit agrees).

usage:
  chain_reference.py --write [N ...]    writes tests/lin/data/chain<N>_<P0|P1>.txt.gz (default 10 20 100)
  chain_reference.py --write-vdot [N ...]  writes tests/lin/data/chain<N>_P1_vdot.txt (default 10 20 100):
                                        the accelerations qdd0 at P1 (u = 0), N numbers
  chain_reference.py --check [N ...]    the checks above, then the files of N (default 10 20) recomputed
  chain_reference.py --compare FILE N   the error of a dump (n rows of 2n numbers, d qdd/dq then
                                        d qdd/dv, as bench/peer_pinocchio.cpp --dump writes) against
                                        the reference of P0; --dq-only compares the d qdd/dq block only
Points: P0 q = 0, v = 0 (the chain's equilibrium); P1 q_k = 0.4 sin(1.3 k), v_k = 0.7 cos(0.9 k)
(k = 1..N, computed in doubles: the file keeps them exactly, and the test linearizes there)."""
import argparse
import gzip
import math
import os
import sys
import time
import xml.etree.ElementTree as ET

from mpmath import mp, mpc, mpf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'bench'))
import chain_urdf  # noqa: E402  (the URDF text the benchmarks and tests/lin/test_tree_accuracy.c use)

DPS = 50              # working digits
DIGITS = 20           # digits written
H_STEP = '1e-40'      # complex step
GRAVITY = 9.81        # along -z (mblin's URDF default)
DATA = os.path.join(HERE, 'data')


# ---- the robot, read from its URDF ---------------------------------------------------------------

def _num(text):
    """a number of the URDF as the double a reader parses, exactly"""
    return mpf(float(text))


def _vec(text):
    return [_num(x) for x in text.split()]


def read_urdf(text):
    """The serial chain of a URDF text: a list of joints in file order, each a dict with the joint
    origin p (parent link frame), the unit axis, the child's mass, centre c and inertia about the
    centre (3x3, link axes) and the damping. Only what the chains use is accepted."""
    root = ET.fromstring(text)
    links = {}
    for ln in root.findall('link'):
        ine = ln.find('inertial')
        if ine is None:
            links[ln.get('name')] = None
            continue
        org = ine.find('origin')
        if org is not None and org.get('rpy') not in (None, '0 0 0'):
            raise ValueError('inertial rpy not supported')
        c = _vec(org.get('xyz')) if org is not None else [mpf(0)] * 3
        m = _num(ine.find('mass').get('value'))
        a = ine.find('inertia').attrib
        g = lambda k: _num(a.get(k, '0'))  # noqa: E731
        inertia = [[g('ixx'), g('ixy'), g('ixz')], [g('ixy'), g('iyy'), g('iyz')], [g('ixz'), g('iyz'), g('izz')]]
        links[ln.get('name')] = (m, c, inertia)
    joints, prev = [], None
    for jt in root.findall('joint'):
        if jt.get('type') not in ('continuous', 'revolute'):
            raise ValueError('joint type %s not supported' % jt.get('type'))
        parent, child = jt.find('parent').get('link'), jt.find('child').get('link')
        if prev is not None and parent != prev:
            raise ValueError('not a serial chain in file order')
        prev = child
        org = jt.find('origin')
        if org is not None and org.get('rpy') not in (None, '0 0 0'):
            raise ValueError('joint rpy not supported')
        ax = _vec(jt.find('axis').get('xyz'))
        nrm = mp.sqrt(sum(x * x for x in ax))
        dyn = jt.find('dynamics')
        m, c, inertia = links[child]
        joints.append({'p': _vec(org.get('xyz')) if org is not None else [mpf(0)] * 3,
                       'axis': [x / nrm for x in ax], 'm': m, 'c': c, 'I': inertia,
                       'damping': _num(dyn.get('damping', '0')) if dyn is not None else mpf(0)})
    return joints


def fnv1a64(text):
    """FNV-1a (64 bits) of the URDF text: the test checks that it loads the text of the reference."""
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return '%016x' % h


# ---- recursive Newton-Euler -----------------------------------------------------------------------

def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _add(*vs):
    return [sum(x) for x in zip(*vs)]


def _mv(R, x):  # R x
    return [R[i][0] * x[0] + R[i][1] * x[1] + R[i][2] * x[2] for i in range(3)]


def _mtv(R, x):  # R^T x
    return [R[0][i] * x[0] + R[1][i] * x[1] + R[2][i] * x[2] for i in range(3)]


def _rot(axis, q):
    """The rotation by q about the unit axis (Rodrigues): child axes to parent axes."""
    s, c = mp.sin(q), mp.cos(q)
    x, y, z = axis
    t = 1 - c
    return [[c + t * x * x, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, c + t * y * y, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, c + t * z * z]]


def inverse_dynamics(joints, q, v, a, g):
    """tau = M(q) a + h(q, v) (gravity g along -z; no damping): Newton-Euler in link frames."""
    n = len(joints)
    w, wd, acc = [0, 0, 0], [0, 0, 0], [0, 0, g]  # the base's; acc = -gravity
    E, F, N = [None] * n, [None] * n, [None] * n
    for k, jt in enumerate(joints):
        R = E[k] = _rot(jt['axis'], q[k])
        p, ax = jt['p'], jt['axis']
        acc = _mtv(R, _add(acc, _cross(wd, p), _cross(w, _cross(w, p))))  # of the joint's origin
        wrel = [x * v[k] for x in ax]
        w_new = _add(_mtv(R, w), wrel)
        wd = _add(_mtv(R, wd), [x * a[k] for x in ax], _cross(w_new, wrel))
        w = w_new
        c, I = jt['c'], jt['I']
        acc_c = _add(acc, _cross(wd, c), _cross(w, _cross(w, c)))
        F[k] = [jt['m'] * x for x in acc_c]
        N[k] = _add(_mv(I, wd), _cross(w, _mv(I, w)))  # about the centre
    tau = [None] * n
    f, nm = [0, 0, 0], [0, 0, 0]  # the child's force and moment (about its origin) on link k, child axes
    for k in range(n - 1, -1, -1):
        if k < n - 1:
            R, p = E[k + 1], joints[k + 1]['p']
            fc = _mv(R, f)
            nc = _add(_mv(R, nm), _cross(p, fc))
        else:
            fc = nc = [0, 0, 0]
        f = _add(F[k], fc)
        nm = _add(N[k], _cross(joints[k]['c'], F[k]), nc)
        ax = joints[k]['axis']
        tau[k] = ax[0] * nm[0] + ax[1] * nm[1] + ax[2] * nm[2]
    return tau


# ---- the linearization -----------------------------------------------------------------------------

def mass_matrix(joints, q):
    n = len(joints)
    zero = [mpf(0)] * n
    cols = []
    for j in range(n):
        e = [mpf(0)] * n
        e[j] = mpf(1)
        cols.append(inverse_dynamics(joints, q, zero, e, 0))
    return mp.matrix([[cols[j][i] for j in range(n)] for i in range(n)])


class Solver:
    """x = M^-1 b by one LU factor of M (mpmath's, at the working precision + 10 bits)."""

    def __init__(self, M):
        self.LU, self.p = mp.LU_decomp(M.copy())

    def solve(self, b):
        y = mp.L_solve(self.LU, mp.matrix(b), self.p)
        x = mp.U_solve(self.LU, y)
        return [x[i] for i in range(len(b))]


def id_derivatives(joints, q, v, a, g, diff='complex'):
    """d ID / d q and d ID / d v at (q, v, a): lists of n columns. diff: 'complex' (step H_STEP)
    or 'central' (central differences, for the check at twice the digits)."""
    n = len(joints)
    cols = []
    for which in (0, 1):
        for j in range(n):
            if diff == 'complex':
                h = mpf(H_STEP)
                x = [mpc(t) for t in (q, v)[which]]
                x[j] += mpc(0, h)
                args = (x, v) if which == 0 else (q, x)
                t = inverse_dynamics(joints, args[0], args[1], a, g)
                cols.append([mp.im(z) / h for z in t])
            else:
                h = mpf(10) ** (-mp.dps // 3)
                tp, tm = [], []
                for sgn, out in ((1, tp), (-1, tm)):
                    x = list((q, v)[which])
                    x[j] += sgn * h
                    args = (x, v) if which == 0 else (q, x)
                    out.extend(inverse_dynamics(joints, args[0], args[1], a, g))
                cols.append([(tp[i] - tm[i]) / (2 * h) for i in range(n)])
    return cols[:n], cols[n:]


def linearize(joints, q, v, diff='complex'):
    """(Aq, Av, B, M): the lower halves of A (d qdd/dq, d qdd/dv) and B (d qdd/du), n x n each as
    lists of rows, and M, at (q, v, u = 0)."""
    n = len(joints)
    M = mass_matrix(joints, q)
    S = Solver(M)
    c = [jt['damping'] for jt in joints]
    h = inverse_dynamics(joints, q, v, [mpf(0)] * n, mpf(GRAVITY))
    qdd0 = S.solve([-h[i] - c[i] * v[i] for i in range(n)])
    dq, dv = id_derivatives(joints, q, v, qdd0, mpf(GRAVITY), diff)
    for j in range(n):
        dv[j][j] += c[j]
    cols_q = [S.solve([-x for x in col]) for col in dq]
    cols_v = [S.solve([-x for x in col]) for col in dv]
    cols_b = []
    for j in range(n):
        e = [mpf(0)] * n
        e[j] = mpf(1)
        cols_b.append(S.solve(e))
    rows = lambda cols: [[cols[j][i] for j in range(n)] for i in range(n)]  # noqa: E731
    return rows(cols_q), rows(cols_v), rows(cols_b), M


def point(n, name):
    """P0 or P1 in doubles (exactly representable: the file keeps them as they are)."""
    if name == 'P0':
        return [0.0] * n, [0.0] * n
    return ([0.4 * math.sin(1.3 * k) for k in range(1, n + 1)], [0.7 * math.cos(0.9 * k) for k in range(1, n + 1)])


# ---- the files --------------------------------------------------------------------------------------

def path_of(n, name):
    return os.path.join(DATA, 'chain%d_%s.txt.gz' % (n, name))


def _fmt(x):
    return mp.nstr(x, DIGITS, min_fixed=1, max_fixed=0, strip_zeros=False) if x != 0 else '0'


def compute(n, name, dps=DPS):
    text = chain_urdf.chain(n)
    with mp.workdps(dps):
        joints = read_urdf(text)
        qd, vd = point(n, name)
        Aq, Av, B, M = linearize(joints, [mpf(x) for x in qd], [mpf(x) for x in vd])
    return text, qd, vd, Aq, Av, B, M


def write(n, name):
    t0 = time.process_time()
    text, qd, vd, Aq, Av, B, _ = compute(n, name)
    os.makedirs(DATA, exist_ok=True)
    head = ('# mblin chain reference (tests/lin/chain_reference.py): N=%d point=%s urdf_fnv1a64=%s dps=%d; '
            'lines: q (N numbers), v (N), the N rows of A\'s lower half [d qdd/dq, d qdd/dv] (2N each), '
            'the N rows of B\'s lower half d qdd/du (N each); %d significant digits\n'
            % (n, name, fnv1a64(text), DPS, DIGITS))
    lines = [head, ' '.join(repr(x) for x in qd) + '\n', ' '.join(repr(x) for x in vd) + '\n']
    lines += [' '.join(_fmt(x) for x in Aq[i] + Av[i]) + '\n' for i in range(n)]
    lines += [' '.join(_fmt(x) for x in B[i]) + '\n' for i in range(n)]
    with gzip.GzipFile(path_of(n, name), 'wb', mtime=0) as f:
        f.write(''.join(lines).encode())
    print('wrote %s (%.1f s)' % (path_of(n, name), time.process_time() - t0))


def accelerations(n, name, dps=DPS):
    """qdd0 = M^-1 (-h - c v) at the point (u = 0), as the linearization's"""
    with mp.workdps(dps):
        joints = read_urdf(chain_urdf.chain(n))
        qd, vd = point(n, name)
        q, v = [mpf(x) for x in qd], [mpf(x) for x in vd]
        S = Solver(mass_matrix(joints, q))
        c = [jt['damping'] for jt in joints]
        h = inverse_dynamics(joints, q, v, [mpf(0)] * n, mpf(GRAVITY))
        return S.solve([-h[i] - c[i] * v[i] for i in range(n)])


def write_vdot(n, name='P1'):
    t0 = time.process_time()
    qdd = accelerations(n, name)
    path = os.path.join(DATA, 'chain%d_%s_vdot.txt' % (n, name))
    text = ('# mblin chain reference (tests/lin/chain_reference.py --write-vdot): N=%d point=%s urdf_fnv1a64=%s '
            'dps=%d; the accelerations qdd0 = M^-1 (-h - c v) at the point (u = 0), %d significant digits\n'
            % (n, name, fnv1a64(chain_urdf.chain(n)), DPS, DIGITS)) + ' '.join(_fmt(x) for x in qdd) + '\n'
    with open(path, 'w') as f:
        f.write(text)
    print('wrote %s (%.1f s)' % (path, time.process_time() - t0))


def read(n, name):
    """(q, v, [rows of A's lower half], [rows of B's lower half]) of a file, as mpf."""
    with gzip.open(path_of(n, name), 'rt') as f:
        lines = f.read().splitlines()
    head = lines[0]
    if 'N=%d ' % n not in head or 'point=%s ' % name not in head:
        raise ValueError('%s: header %r' % (path_of(n, name), head))
    rows = [[mpf(x) for x in ln.split()] for ln in lines[1:]]
    return rows[0], rows[1], rows[2:2 + n], rows[2 + n:2 + 2 * n], head


# ---- the checks ----------------------------------------------------------------------------------------

def _maxrel(a, b):
    """max |a - b| / max |b| over two lists of rows"""
    big = max(abs(x) for r in b for x in r)
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)) / big


def _expect(what, err, tol):
    ok = err <= tol
    print('%-62s %.2e (tol %.0e) %s' % (what, float(err), tol, 'ok' if ok else 'FAILED'))
    return ok


def check_compound(ok):
    """N = 1: J qdd = u - m g d sin q - c v, J = Iyy + m d^2"""
    joints = read_urdf(chain_urdf.chain(1))
    jt = joints[0]
    m, d, c = jt['m'], -jt['c'][2], jt['damping']
    J = jt['I'][1][1] + m * d * d
    for q0, v0 in ((0, 0), (0.7, -1.3)):
        Aq, Av, B, _ = linearize(joints, [mpf(q0)], [mpf(v0)])
        ref = [[-m * GRAVITY * d * mp.cos(q0) / J, -c / J, 1 / J]]
        ok &= _expect('N = 1 compound pendulum at q = %g, v = %g' % (q0, v0),
                      _maxrel([[Aq[0][0], Av[0][0], B[0][0]]], ref), 1e-45)
    return ok


def _double_pendulum_qdd(jts, q1, q2, v1, v2, u1, u2):
    """the planar double pendulum (both axes y, relative angles) from its Lagrangian"""
    m1, m2 = jts[0]['m'], jts[1]['m']
    a1, a2, L1 = -jts[0]['c'][2], -jts[1]['c'][2], -jts[1]['p'][2]
    I1, I2 = jts[0]['I'][1][1], jts[1]['I'][1][1]
    c1, c2 = jts[0]['damping'], jts[1]['damping']
    g = mpf(GRAVITY)
    M11 = I1 + m1 * a1 ** 2 + I2 + m2 * (L1 ** 2 + a2 ** 2 + 2 * L1 * a2 * mp.cos(q2))
    M12 = I2 + m2 * (a2 ** 2 + L1 * a2 * mp.cos(q2))
    M22 = I2 + m2 * a2 ** 2
    h1 = -m2 * L1 * a2 * mp.sin(q2) * (2 * v1 * v2 + v2 ** 2)
    h2 = m2 * L1 * a2 * mp.sin(q2) * v1 ** 2
    G1 = (m1 * a1 + m2 * L1) * g * mp.sin(q1) + m2 * a2 * g * mp.sin(q1 + q2)
    G2 = m2 * a2 * g * mp.sin(q1 + q2)
    r1, r2 = u1 - h1 - G1 - c1 * v1, u2 - h2 - G2 - c2 * v2
    det = M11 * M22 - M12 ** 2
    return (M22 * r1 - M12 * r2) / det, (M11 * r2 - M12 * r1) / det


def check_double_planar(ok):
    text = chain_urdf.chain(2).replace('<axis xyz="1 0 0"/>', '<axis xyz="0 1 0"/>')
    joints = read_urdf(text)
    x0 = [mpf('0.5'), mpf('-0.8'), mpf('1.1'), mpf('0.6')]  # q1, q2, v1, v2
    Aq, Av, B, _ = linearize(joints, x0[:2], x0[2:])
    ref = []
    for i in range(2):
        row = []
        for j in range(6):  # d qdd_i / d (q1, q2, v1, v2, u1, u2)
            def f(t, i=i, j=j):
                x = x0 + [mpf(0), mpf(0)]
                x[j] = t
                return _double_pendulum_qdd(joints, *x)[i]
            row.append(mp.diff(f, (x0 + [mpf(0), mpf(0)])[j]))
        ref.append(row)
    mine = [Aq[i] + Av[i] + B[i] for i in range(2)]
    return ok & _expect('N = 2 planar double pendulum vs its Lagrangian (mp.diff)', _maxrel(mine, ref), 1e-35)


def check_double_spatial(ok):
    joints = read_urdf(chain_urdf.chain(2))
    m1, m2 = joints[0]['m'], joints[1]['m']
    a1, a2, L1 = -joints[0]['c'][2], -joints[1]['c'][2], -joints[1]['p'][2]
    I1y, I2y, I2x = joints[0]['I'][1][1], joints[1]['I'][1][1], joints[1]['I'][0][0]
    c1, c2, g = joints[0]['damping'], joints[1]['damping'], mpf(GRAVITY)
    M11, M22 = I1y + m1 * a1 ** 2 + I2y + m2 * (L1 + a2) ** 2, I2x + m2 * a2 ** 2
    K11, K22 = (m1 * a1 + m2 * (L1 + a2)) * g, m2 * a2 * g
    Aq, Av, B, M = linearize(joints, [mpf(0)] * 2, [mpf(0)] * 2)
    ref = [[-K11 / M11, 0, -c1 / M11, 0, 1 / M11, 0], [0, -K22 / M22, 0, -c2 / M22, 0, 1 / M22]]
    ok &= _expect('N = 2 spatial chain at q = 0 vs the hand derivation',
                  _maxrel([Aq[i] + Av[i] + B[i] for i in range(2)], ref), 1e-45)
    # gravity forces at a moved point: the gradient of V = -g (m1 a1 cos q1 + m2 cos q1 (L1 + a2 cos q2))
    q = [mpf('0.4'), mpf('-0.9')]
    V = lambda x, y: -g * (m1 * a1 * mp.cos(x) + m2 * mp.cos(x) * (L1 + a2 * mp.cos(y)))  # noqa: E731
    G = inverse_dynamics(joints, q, [0, 0], [0, 0], g)
    ref = [[mp.diff(V, (q[0], q[1]), (1, 0)), mp.diff(V, (q[0], q[1]), (0, 1))]]
    return ok & _expect('N = 2 spatial chain: gravity forces vs grad V', _maxrel([G], ref), 1e-40)


def check_method(n, ok):
    """M symmetric; complex step against central differences at twice the digits"""
    joints = read_urdf(chain_urdf.chain(n))
    qd, vd = point(n, 'P1')
    q, v = [mpf(x) for x in qd], [mpf(x) for x in vd]
    Aq, Av, B, M = linearize(joints, q, v)
    asym = max(abs(M[i, j] - M[j, i]) for i in range(n) for j in range(n)) / max(abs(x) for x in M)
    ok &= _expect('N = %d: M symmetric' % n, asym, 1e-45)
    with mp.workdps(2 * DPS):
        joints2 = read_urdf(chain_urdf.chain(n))
        Aq2, Av2, B2, _ = linearize(joints2, q, v, diff='central')
    err = _maxrel([Aq[i] + Av[i] for i in range(n)], [Aq2[i] + Av2[i] for i in range(n)])
    return ok & _expect('N = %d at P1: complex step vs central differences (dps %d)' % (n, 2 * DPS), err, 1e-30)


def check_file(n, name, ok):
    """the file against a recomputation at DPS - 10 digits: every written digit stands"""
    q, v, A, B, head = read(n, name)
    text, qd, vd, Aq, Av, B2, _ = compute(n, name, DPS - 10)
    ok &= _expect('%s: URDF text and point' % os.path.basename(path_of(n, name)),
                  0 if (fnv1a64(text) in head and [float(x) for x in q + v] == qd + vd) else 1, 0)
    tol = 10.0 ** (1 - DIGITS)
    ok &= _expect('%s: A lower half recomputed at dps %d' % (os.path.basename(path_of(n, name)), DPS - 10),
                  _maxrel(A, [Aq[i] + Av[i] for i in range(n)]), tol)
    return ok & _expect('%s: B lower half recomputed at dps %d' % (os.path.basename(path_of(n, name)), DPS - 10),
                        _maxrel(B, B2), tol)


def compare(path, n, dq_only):
    """the error of a dump (n rows of d qdd/dq then d qdd/dv) against the reference of P0"""
    with open(path) as f:
        rows = [[mpf(x) for x in ln.split()] for ln in f if ln.strip()]
    if len(rows) != n or any(len(r) != 2 * n for r in rows):
        sys.exit('%s: expected %d rows of %d numbers' % (path, n, 2 * n))
    _, _, A, _, _ = read(n, 'P0')
    eq = _maxrel([r[:n] for r in rows], [r[:n] for r in A])
    print('%s: d qdd/dq max |dump - ref| / max |ref| = %.3g' % (path, float(eq)))
    if not dq_only:
        ev = _maxrel([r[n:] for r in rows], [r[n:] for r in A])
        print('%s: d qdd/dv max |dump - ref| / max |ref| = %.3g' % (path, float(ev)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--write', action='store_true')
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--write-vdot', action='store_true')
    ap.add_argument('--compare', metavar='FILE')
    ap.add_argument('--dq-only', action='store_true')
    ap.add_argument('N', nargs='*', type=int)
    a = ap.parse_args()
    mp.dps = DPS
    if a.compare:
        if len(a.N) != 1:
            sys.exit('--compare FILE N')
        compare(a.compare, a.N[0], a.dq_only)
        return 0
    if a.write:
        for n in a.N or [10, 20, 100]:
            for name in ('P0', 'P1'):
                write(n, name)
    if a.write_vdot:
        for n in a.N or [10, 20, 100]:
            write_vdot(n)
    if a.check:
        ok = check_compound(True)
        ok = check_double_planar(ok)
        ok = check_double_spatial(ok)
        ok = check_method(4, ok)
        for n in a.N or [10, 20]:
            for name in ('P0', 'P1'):
                ok = check_file(n, name, ok)
        print('all checks passed' if ok else 'SOME CHECKS FAILED')
        return 0 if ok else 1
    if not a.write and not a.write_vdot:
        ap.print_help()
    return 0


if __name__ == '__main__':
    sys.exit(main())
