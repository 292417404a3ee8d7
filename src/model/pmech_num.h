/* Planar rigid bodies and revolute joints in absolute coordinates evaluated numerically beside the
 * tapes (src/model/terms/pmech_num.c), the way model/terms/ffr_num.c treats planar flexible bodies.
 *
 * The mechanism compiler (src/mech/, `space: planar`, absolute coordinates) describes each rigid
 * body (its coordinates x, y, th, its mass, its inertia about the centre of mass, the centre of
 * mass in body axes) and each revolute, fixed or orientation joint (its rows among the model's
 * constraints, its two markers' positions and angles in their bodies' axes, or in global axes on
 * the ground), each spring-damper as texts of the
 * parameters, and the uniform gravity; it writes no kinetic energy, no weight and no constraint
 * text for them (the constraint items stay, with the text "0", for their names and order). The
 * model parses the texts, evaluates them once (a mechanism's parameters are baked: set_param
 * refuses them), and adds the inertia, weight and reaction terms to the equations of motion, the
 * joints' rows Phi, Phid, Phidd, and every Jacobian entry of these in closed form, numerically:
 * model_eval_F and model_eval_jac. The same closed forms as expressions of the parameter
 * nodes are built on demand for the sensitivities and the code generator (model_pmech_num_exprs, merged
 * by model_dae_nodes). Internal to the library. */
#ifndef MBLIN_MODEL_PMECH_NUM_H
#define MBLIN_MODEL_PMECH_NUM_H

#include "mblin/expr.h"
#include "mblin/status.h"

/* what the compiler hands over (owned by mbl_src, freed by model_pmech_src_free) */
typedef struct mbl_pmech_body {
    char *name;     /* the body's name, for messages */
    char *q[3];     /* its coordinates x, y, th */
    char *t[4];     /* texts: mass, inertia about the centre of mass, centre of mass x, y (body axes) */
    int line, col;
} mbl_pmech_body;

enum { MBL_PMECH_REVOLUTE, MBL_PMECH_FIXED, MBL_PMECH_ORIENTATION };

typedef struct mbl_pmech_joint {
    char *name;
    int type;       /* MBL_PMECH_*: rows x, y (revolute), x, y, angle (fixed), angle (orientation) */
    int c0;         /* its first constraint (0-based) */
    int b[2];       /* the bodies of markers i and j (indices into the list above), -1: the ground */
    char *s[2][2];  /* the markers' positions in their bodies' axes (global on the ground) */
    char *a[2];     /* the markers' angles on their bodies (on the ground: global) */
    int line, col;
} mbl_pmech_joint;

/* a translational spring-damper between two markers: f = -k (L - L0) - c L' + f0 along the line
 * from j to i, positive pushing the markers apart */
typedef struct mbl_pmech_spring {
    char *name;
    int b[2];       /* as a joint's */
    char *s[2][2];
    char *t[4];     /* texts: k, c, L0, f0 */
    int line, col;
} mbl_pmech_spring;

typedef struct mbl_pmech_src {
    int nb, nj, cb, cj, ns, cs;
    mbl_pmech_body *b;
    mbl_pmech_joint *j;
    mbl_pmech_spring *s;
    char *g[2];     /* the gravity vector (NULL: none), applied to these bodies only */
    int gline, gcol;
    char **blocks;  /* every text above is cut from these (model_pmech_src_text) */
    int nblocks, cblocks;
    size_t left;    /* bytes left in the last block */
} mbl_pmech_src;

/* A copy of s owned by p (cut from p's blocks: 92,000 texts of the N = 2000 four-bar mechanism
 * were a malloc and a free each); NULL when out of memory */
char *model_pmech_src_text(mbl_pmech_src *p, const char *s);
void model_pmech_src_free(mbl_pmech_src *p);

/* The switch (default on): model_pmech_set_numeric(0) before loading makes the compiler write the
 * texts as before (for comparisons and tests). */
void model_pmech_set_numeric(int on);
int model_pmech_numeric(void);

struct mbl_model;
struct mbl_sjac;
typedef struct mbl_pmech_num mbl_pmech_num;
/* At formulation: the parsed texts (nb * 4 nodes, nj * 6 nodes: s[0][0], s[0][1], s[1][0],
 * s[1][1], a[0], a[1], ns * 8 nodes: the same then k, c, L0, f0, and 2 gravity nodes), the model coordinate
 * indices (3 per body); the term's Jacobian pattern is pushed into md->sjac (node 0) and md->pmn set. */
int model_pmech_num_new(struct mbl_model *md, const mbl_pmech_src *p, const int *qidx, const mblx_id *bn,
                      const mblx_id *jn, const mblx_id *sn, const mblx_id gn[2], mbl_status *st);
/* After the merge: md->sjac indices through map (an md->sjac index -> an md->jac index). */
void model_pmech_num_remap(mbl_pmech_num *t, const int *map);
/* Add the rows (F, nF; NULL: none) or the Jacobian entries (J; NULL: none) at the symbols syms. */
int model_pmech_num_eval(const struct mbl_model *md, const mbl_pmech_num *t, const double *syms, double *F, double *J,
                       mbl_status *st);
/* A spring whose markers meet at a solved point, where its free length is not 0: length below
 * MBL_SPRING_MEET_TOL of the free length. Its force there, of the size k L0, has no direction (the
 * line between the markers), and its stiffness across that line, -f / L, is unbounded: a point
 * found there (a spring hanging on a rail across it, started with its ends together) is refused.
 * The text path's springs (src/mech/force.c) check the same by a singular item. */
#define MBL_SPRING_MEET_TOL 1e-6

/* The springs at the solved point syms (model_check_domain, through the term table): 0, or
 * MBL_ESINGULAR naming the first spring whose markers meet ("file:line:col: force 'name' ..."). */
int model_pmech_num_check(const struct mbl_model *md, const mbl_pmech_num *t, const double *syms, mbl_status *st);

/* As model_pmech_num_eval, where only the rows of the groups in rowmask (bits 1 << MBL_ROW_*) and
 * their entries in the blocks of colmask (bits 1 << MBL_BLK_*) are wanted: the rows of Phid and
 * Phidd, and the entries in the velocities' and accelerations' columns, are left out where their
 * bits are not set (their places in F and J left as they are); the others are computed. The values
 * computed are model_pmech_num_eval's bit for bit. */
int model_pmech_num_eval_sel(const struct mbl_model *md, const mbl_pmech_num *t, const double *syms, double *F,
                             double *J, unsigned rowmask, unsigned colmask, mbl_status *st);
/* The expression form (graph lock held): rows added to Fs (nF), entries pushed into S. */
int model_pmech_num_exprs(struct mbl_model *md, const mbl_pmech_num *t, mblx_id *Fs, struct mbl_sjac *S, mbl_status *st);
/* Number of Jacobian entries the term writes (tests). */
int model_pmech_num_entries(const mbl_pmech_num *t);
void model_pmech_num_free(mbl_pmech_num *t);

#endif
