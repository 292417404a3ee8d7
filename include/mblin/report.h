/* mblin: reports of operating points, linear models and modes (text, JSON, Matrix Market, the
 * comparison of methods, the model check) and the HTML pages of every result (src/report). The
 * writers of the other results are declared beside their families: a sweep's and a frequency
 * response's CSV, JSON and SVG, and the generic plot, in mblin/sweep.h (src/study); a
 * trajectory's CSV in mblin/sim.h (src/sim).
 *
 * The writers take a stream opened by the caller (the library itself never writes to stdout or
 * stderr on its own) and return 0 or MBL_EIO. */
#ifndef MBLIN_REPORT_H
#define MBLIN_REPORT_H

#include "mblin/export.h"

#include <stdio.h>

#include "mblin/model.h"
#include "mblin/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MBL_REPORT_MATRICES = 1u << 0, /* print A, B, C, D and M, C, K in the text report */
    MBL_REPORT_SHAPES = 1u << 1,   /* print the mode shapes in the text report */
    MBL_REPORT_NO_MATRICES = 1u << 2 /* JSON: leave out the large dense outputs (ss, mck, q_S,
                                        mode_shapes, descriptor) */
};

/* Open path for writing a new output file: a symbolic link at path is replaced by the new file, never
 * followed (the file it points to is left as it is), except a path under /dev/ or /proc/ and a link
 * to a device, pipe or socket (/dev/stdout, a link to /dev/null), which are written through as
 * before; a regular file at path is truncated. The stream, or NULL with MBL_EIO ("PATH: cannot
 * write (reason)") in st and errno set to the cause. The export functions below open their files this way, and so does the
 * command-line tool for every file it writes (docs/cli.md, "Output files"). */
MBL_API FILE *mbl_output_open(const char *path, mbl_status *st);

/* The operating point for a person: kind, iterations, residual, q, v, vdot, multipliers. */
MBL_API int mbl_report_point_text(FILE *f, const mbl_model *model, const mbl_point *pt);

/* The whole result for a person, like Adams Linear: point, states and what the selection did,
 * the eigen table (mode, frequency, damping ratio, real, imaginary), matrices on request. */
MBL_API int mbl_report_text(FILE *f, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin,
                    const mbl_modes *modes, unsigned flags);

/* One JSON object (DESIGN.md sec. 5): method, states, velocity_states, inputs, outputs,
 * ss {A,B,C,D}, mck {M,C,K,F}, eigenvalues [{re,im,freq_hz,damped_freq_hz,damping_ratio,spurious,kind}],
 * operating_point {at,t,coordinates,q,v,vdot,lambda,mu,inputs,iterations,residual},
 * selection, condition, mode_shapes. Matrices are lists of rows. */
MBL_API int mbl_report_json(FILE *f, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin,
                    const mbl_modes *modes);
/* The same with flags (MBL_REPORT_NO_MATRICES). Both stream element by element (fprintf), never
 * building the text in memory. Always present: "spectrum": {partial, count, of} (count eigenvalues
 * listed of the `of` = nx of the model), with a partial spectrum also nev, shift, reason, and
 * "not_formed" when the state-space form was not formed; ss, mck and q_S are then absent. */
MBL_API int mbl_report_json_flags(FILE *f, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin,
                          const mbl_modes *modes, unsigned flags);

/* The operating point alone as one JSON object. */
MBL_API int mbl_report_point_json(FILE *f, const mbl_model *model, const mbl_point *pt);

/* Write A.mtx, B.mtx, C.mtx, D.mtx, M.mtx, Cd.mtx (damping), K.mtx, F.mtx (Matrix Market:
 * `coordinate real general` for a sparse matrix, at most a quarter of its entries nonzero, its
 * nonzeros listed by column; `array real general` for the others: mbl_report_export_format) and linear_model.m (Octave/MATLAB: the matrices with their state, input
 * and output names) into the existing directory dir; with the descriptor method also E.mtx,
 * Ad.mtx, Bd.mtx, Cdd.mtx (the pencil, when it is stored dense). A partial-spectrum result whose
 * state-space form was not formed (lin->A NULL) writes what exists: eigenvalues.mtx (neig x 2:
 * re, im), shapes_re.mtx and shapes_im.mtx (n x neig: dq of each eigenvector), Bd.mtx and Cdd.mtx
 * when formed, and linear_model.m, which says what was not formed. */
MBL_API int mbl_report_export(const char *dir, const mbl_model *model, const mbl_linear *lin, mbl_status *st);
/* The same with the Matrix Market format of the linear model's matrices (A .. F, E, Ad, Bd, Cdd) chosen:
 * MBL_MTX_AUTO (mbl_report_export's: coordinate when at most a quarter of the entries are nonzero,
 * array otherwise), MBL_MTX_ARRAY (every one dense, as before issue 70), MBL_MTX_COORDINATE (every
 * one as the list of its nonzeros). Eigenvalues and mode shapes are always arrays; an empty matrix
 * is always an empty coordinate list. Errors: MBL_EARG (another fmt), MBL_EIO. */
enum { MBL_MTX_AUTO = 0, MBL_MTX_ARRAY = 1, MBL_MTX_COORDINATE = 2 };
MBL_API int mbl_report_export_format(const char *dir, const mbl_model *model, const mbl_linear *lin, int fmt,
                                     mbl_status *st);

/* Flexible bodies (beam bodies): for each body b, flex_<b>_nodes.mtx (nodes x 2: the global x, y of
 * its nodes at the point) and flex_<b>_shapes_re.mtx, flex_<b>_shapes_im.mtx (3 nodes x modes: the
 * global dx, dy and rotation of node 1, node 2, ... for each mode of `modes`), so that a plot or an
 * animation can draw the deformed beam; a spatial body (mbl_model_flex_dim 3): nodes x 3 (x, y, z)
 * and 6 nodes x modes (dx, dy, dz, rx, ry, rz of each node: global displacements and small
 * rotations). Nothing when the model has no flexible body. The JSON
 * report carries the same as "flexible_bodies". */
MBL_API int mbl_report_export_flex(const char *dir, const mbl_model *model, const mbl_point *pt, const mbl_modes *modes,
                           mbl_status *st);

/* Relative-coordinate mechanisms: the velocity transformation at the point
 * (mbl_model_velocity_transformation) as vt_B.mtx and vt_Bdot.mtx (rows x coordinates) and
 * vt_dBdq.mtx (rows x n^2: plane m = dB/dq_m in columns m n .. m n + n - 1), with the row and
 * column names in vt_names.txt, and the open tree's stiffness K_l (mbl_open_tree_stiffness, source 003
 * Sec. 3.2.2: before the cut joints' constraints) as K_l.mtx (n x n). Nothing for other models. The JSON
 * report carries B, Bdot, dB/dq as "velocity_transformation". */
MBL_API int mbl_report_export_vtrans(const char *dir, const mbl_model *model, const mbl_point *pt, mbl_status *st);

/* Model check for a person (`mblin check`): counts, degrees of freedom by counting and by the
 * rank of the constraint Jacobian at pt (which may be NULL when no point could be found),
 * redundant constraints. */
MBL_API int mbl_report_check(FILE *f, const mbl_model *model, const mbl_point *pt);

/* The `mblin compare` result: one table (method, wall time, physical eigenvalues, largest
 * relative deviation from the reference, error estimate, notes), or one JSON object
 * {model, reference, methods: [{method, ok, seconds, physical_eigenvalues, max_rel_deviation,
 * error_estimate, notes}]} when json is nonzero. */
MBL_API int mbl_report_compare(FILE *f, const mbl_model *model, const mbl_comparison *c, int json);

/* The report as one self-contained offline HTML page (`mblin report`, docs/report.md): the model
 * summary, the operating point, the eigen table, the root locus and, for a mechanism, a 3D view
 * of its bodies, markers and joints that animates a mode on a click. The page needs no network:
 * its scripts are part of the library (web/report.html, embedded at build time). */
MBL_API int mbl_report_html(FILE *f, const mbl_model *model, const mbl_point *pt, const mbl_linear *lin,
                    const mbl_modes *modes, mbl_status *st);

/* A sweep's results as the same kind of page: an interactive Campbell diagram (with the
 * excitation lines of `orders` and the critical speeds crit, may be NULL; frequencies up to fmax,
 * <= 0: all), root locus and damping plot of the tracked branches. The arguments are those of
 * mbl_sweep_svg_campbell. */
MBL_API int mbl_sweep_report_html(FILE *f, const mbl_sweep *sw, const double *orders, int norders, double hz_per_unit,
                          double fmax, const mbl_critical *crit, int ncrit, mbl_status *st);

/* The interactive page of a frequency response (web/report.html, docs/report.md): every pair's
 * Bode magnitude and phase, the singular values, each pair's peak. */
MBL_API int mbl_freqresp_report_html(FILE *f, const mbl_freqresp_mimo *r, const char *model_name, mbl_status *st);

#ifdef __cplusplus
}
#endif
#endif
