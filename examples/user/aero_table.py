"""An aerodynamic force from a table, as a user routine written in Python (docs/python.md, "User
routines"; docs/user-routines.md).

The wind-tunnel model of Hodges and Pierce, "Introduction to Structural Dynamics and Aeroelasticity"
(2nd ed., Cambridge University Press, 2011), chapter 4 (static aeroelasticity: the rigid,
wall-mounted wind-tunnel model): a rigid wing section of chord c and span b on a torsional spring k_theta at its elastic
axis, set at the angle alpha0 in a wind of speed V. The lift acts at the aerodynamic centre, a
distance e ahead of the elastic axis, and pitches the wing up:

    I theta'' + c_theta theta' + k_theta theta = q S e C_L(alpha0 + theta),   q = rho V^2 / 2

(quasi-steady: the lift follows the angle of attack). Its divergence (the moment of the lift
overcoming the spring) is at q_D = k_theta / (S e dC_L/dalpha). Here C_L and C_D
are a table against the angle of attack, joined by straight lines (numpy.interp): the shape of the
measured curves of a symmetric section, the lift slope falling before the stall near 12 degrees
(illustrative values, not a measurement). The routine `aero` returns (C_L, C_D); the model uses
C_L in the pitching moment and reports the drag q S C_D as an output. It has no partials: mblin
takes its derivatives by central differences and says how accurate they are.

The same table written as a `data:` set of the model file with `table()` (straight lines: the
same function) gives the same linear model with exact derivatives: the check of this example
(tests/python/test_user_routines.py). Run it:

    PYTHONPATH=build/python python3 examples/user/aero_table.py
"""
import math

import numpy as np

import mblin

ALPHA_DEG = [-20, -16, -12, -8, -4, 0, 4, 8, 12, 16, 20]
CL = [-0.95, -1.10, -1.12, -0.85, -0.44, 0.0, 0.44, 0.85, 1.12, 1.10, 0.95]
CD = [0.30, 0.16, 0.035, 0.014, 0.008, 0.006, 0.008, 0.014, 0.035, 0.16, 0.30]
ALPHA = [math.radians(a) for a in ALPHA_DEG]

PARAMETERS = {
    "rho": 1.225,     # air density (kg/m^3)
    "V": 18.0,        # wind speed (m/s)
    "chord": 0.3,     # (m)
    "span": 1.0,      # (m)
    "e": 0.045,       # aerodynamic centre ahead of the elastic axis (m): 0.15 chord
    "k_theta": 40.0,  # torsional spring (N m/rad)
    "I_theta": 0.05,  # pitch inertia about the elastic axis (kg m^2)
    "c_theta": 0.05,  # structural damping (N m s/rad)
    "alpha0": math.radians(3.0),  # the angle the wing is set at (rad)
}


def aero(x):
    """The routine: x[0] the angle of attack (rad) -> (C_L, C_D), linear between the table's points."""
    alpha = x[0]
    return np.interp(alpha, ALPHA, CL), np.interp(alpha, ALPHA, CD)


def model_dict(table=False):
    """The model file as a dict: the coefficients from the routine `aero` (table False) or from the
    same points as data sets read by table() (table True)."""
    d = {
        "model": "dae",
        "name": "wing section on a torsional spring in a wind tunnel (Hodges and Pierce, ch. 4)",
        "parameters": dict(PARAMETERS),
        "coordinates": {"theta": 0.0},
        "variables": {"q": "0.5*rho*V^2", "S": "chord*span", "alpha": "alpha0 + theta"},
        "kinetic_energy": "0.5*I_theta*der(theta)^2",
        "potential_energy": "0.5*k_theta*theta^2",
        "dissipation": "0.5*c_theta*der(theta)^2",
        "forces": {"theta": "q*S*e*cl"},
        "outputs": {"lift": "q*S*cl", "drag": "q*S*cd", "alpha_deg": "alpha*180/pi"},
        "linearize": {"at": "equilibrium"},
    }
    if table:
        d["data"] = {"cl_table": {"method": "linear", "x": ALPHA, "y": CL},
                     "cd_table": {"method": "linear", "x": ALPHA, "y": CD}}
        d["variables"].update({"cl": "table(cl_table, alpha)", "cd": "table(cd_table, alpha)"})
    else:
        d["routines"] = {"aero": {"inputs": ["alpha"], "outputs": ["cl", "cd"]}}
    return d


def load(table=False, **kwargs):
    """The model with the routine (table False) or with the data sets (table True)."""
    if table:
        return mblin.from_dict(model_dict(True), name="aero_table_data", **kwargs)
    return mblin.from_dict(model_dict(False), name="aero_table", user={"aero": aero}, **kwargs)


def divergence_speed():
    """q_D = k_theta / (S e dC_L/dalpha) with the slope of the table's segment at the operating point."""
    p = PARAMETERS
    S = p["chord"] * p["span"]
    slope = (CL[7] - CL[6]) / (ALPHA[7] - ALPHA[6])  # 4 to 8 degrees
    q_d = p["k_theta"] / (S * p["e"] * slope)
    return math.sqrt(2.0 * q_d / p["rho"])


if __name__ == "__main__":
    lin = load().linearize()
    ref = load(table=True).linearize()
    print("operating point: theta = %.6f rad, alpha = %.4f deg" % (lin.point.q[0], lin.point.outputs[2]))
    print("the routine (central differences):")
    print(lin.eigen_table())
    print("notes:", lin.notes)
    print("error estimate of the eigenvalues: %.3g" % lin.error_estimate)
    print("the same table as a data set (exact derivatives):")
    print(ref.eigen_table())
    print("largest difference of the eigenvalues: %.3g" % np.max(np.abs(np.sort_complex(lin.eigenvalues)
                                                                         - np.sort_complex(ref.eigenvalues))))
    print("divergence speed on this segment of the table (q_D = k_theta / (S e dC_L/dalpha)): %.4f m/s"
          % divergence_speed())
