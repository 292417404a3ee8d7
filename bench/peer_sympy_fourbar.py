#!/usr/bin/env python3
"""SymPy's linearization of the N-loop four-bar (the peer of bench/peers.py): the same linkage as
examples/fourbar.py (rockers A_i-B_i, couplers B_(i-1)-B_i, uniform bars l = 1, m = 1, inertia
m l^2/12, springs B_i-A_(i-1) k = 25 with free length sqrt(2) l, gravity 9.81) in rocker and coupler
angles with the loop closures as configuration constraints, by sympy.physics.mechanics KanesMethod
(independent coordinate: the angle of rocker N, as mblin's state) and its Linearizer
(KanesMethod.linearize) at the equilibrium given on the command line; eigenvalues of the 2 x 2 A.
Prints JSON: the process CPU time of formulation, linearization and eigenvalues (not the import),
and the eigenvalues.

usage: peer_sympy_fourbar.py N '[th_0, ..., th_N, psi_1, ..., psi_N]'
"""
import sys, time, math, json, subprocess
import sympy as sm
import sympy.physics.mechanics as me

def build(N, l=1.0, m=1.0, k=25.0, g=9.81):
    th = me.dynamicsymbols('th0:%d' % (N + 1))
    ps = me.dynamicsymbols('ps1:%d' % (N + 1))
    uth = me.dynamicsymbols('uth0:%d' % (N + 1))
    ups = me.dynamicsymbols('ups1:%d' % (N + 1))
    F = me.ReferenceFrame('F')
    O = me.Point('O'); O.set_vel(F, 0)
    L0 = math.sqrt(2) * l
    bodies, loads = [], []
    A = [O.locatenew('A%d' % i, i * l * F.x) for i in range(N + 1)]
    for a in A: a.set_vel(F, 0)
    B, RF = [], []
    for i in range(N + 1):
        R = F.orientnew('R%d' % i, 'Axis', (th[i], F.z)); R.set_ang_vel(F, uth[i] * F.z)
        G = A[i].locatenew('GR%d' % i, l / 2 * R.x); G.v2pt_theory(A[i], F, R)
        b = A[i].locatenew('B%d' % i, l * R.x); b.v2pt_theory(A[i], F, R)
        B.append(b)
        bodies.append(me.RigidBody('rocker%d' % i, G, R, m, (me.inertia(R, 0, 0, m * l * l / 12), G)))
        loads.append((G, -m * g * F.y))
    for i in range(1, N + 1):
        C = F.orientnew('C%d' % i, 'Axis', (ps[i - 1], F.z)); C.set_ang_vel(F, ups[i - 1] * F.z)
        G = B[i - 1].locatenew('GC%d' % i, l / 2 * C.x); G.v2pt_theory(B[i - 1], F, C)
        bodies.append(me.RigidBody('coupler%d' % i, G, C, m, (me.inertia(C, 0, 0, m * l * l / 12), G)))
        loads.append((G, -m * g * F.y))
        d = B[i].pos_from(A[i - 1]); Ld = d.magnitude()
        loads.append((B[i], -k * (Ld - L0) * d / Ld))
    # loop closure: B_(i-1) + l C.x - B_i = 0
    # loops and dependent coordinates from the last loop down (loop i gives th_(i-1), psi_i once
    # th_i is known): SymPy solves the constraints by LU without pivoting, and in the natural order
    # its pivots vanish where rockers are parallel (every equilibrium of this linkage: nan)
    cc = []
    for i in range(N, 0, -1):
        C = bodies[N + i].frame
        e = B[i - 1].pos_from(O) + l * C.x - B[i].pos_from(O)
        cc += [e.dot(F.x), e.dot(F.y)]
    q = list(th) + list(ps); u = list(uth) + list(ups)
    kd = [qq.diff() - uu for qq, uu in zip(q, u)]
    vc = [sm.diff(c, me.dynamicsymbols._t).subs({qq.diff(): uu for qq, uu in zip(q, u)}) for c in cc]
    qdep, udep = [], []
    for i in range(N, 0, -1):
        qdep += [th[i - 1], ps[i - 1]]
        udep += [uth[i - 1], ups[i - 1]]
    KM = me.KanesMethod(F, q_ind=[th[N]], u_ind=[uth[N]], kd_eqs=kd, q_dependent=qdep,
                        configuration_constraints=cc, u_dependent=udep, velocity_constraints=vc)
    KM.kanes_equations(bodies, loads)
    return KM, th, ps, q, u

def main():
    N = int(sys.argv[1]); qvals = json.loads(sys.argv[2])  # [th0..thN, ps1..psN]
    t0 = time.process_time()
    KM, th, ps, q, u = build(N)
    op = {qq: v for qq, v in zip(q, qvals)}
    op.update({uu: 0 for uu in u}); op.update({uu.diff(): 0 for uu in u}); op.update({qq.diff(): 0 for qq in q})
    A, B, _ = KM.linearize(op_point=op, A_and_B=True)
    A = sm.Matrix(A).evalf()
    ev = [complex(x) for x in A.eigenvals(multiple=True)]
    t1 = time.process_time()
    print(json.dumps({"cpu": t1 - t0, "eig": [[e.real, e.imag] for e in ev]}))

if __name__ == "__main__":
    main()
