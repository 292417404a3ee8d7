/* The formulation's shared context, internal to src/model: the loader that the steps of
 * model_from_src (model.c) pass along and the functions their files share. */
#ifndef MBLIN_MODEL_FORMULATE_H
#define MBLIN_MODEL_FORMULATE_H

#include "model/model_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lapacke.h>

#include "model/source.h"

/* ---- loading context ------------------------------------------------------------------------ */

enum { SCOPE_PARAM, SCOPE_VALUE, SCOPE_FULL, SCOPE_POSITION };
enum { VAR_NEW, VAR_BUSY, VAR_DONE };

typedef struct loader {
    mbl_model *md;
    mbl_src *src;
    mbl_status *st;
    int scope;
    int param_limit;          /* SCOPE_PARAM: parameters < this may be used */
    int *var_state;           /* per variable */
    mblx_id *var_node;
    int var_stack[64];        /* for cycle messages */
    int var_depth;
    const mbl_src_item *item; /* the item being parsed (for messages) */
    const char *what;         /* what it is ("kinetic_energy", "forces.y", ...) */
    int oom;                  /* an allocation failed inside the resolver */
    double *pvals;            /* symbol values for evaluating parameter expressions */
    int allow_mult;           /* 1 while parsing outputs: lambda() and mu() may be used */
    int mult_refused;         /* set when lambda()/mu() (or a constraint's name) was refused */
    int cname_refs, cname_calls; /* constraint names resolved / consumed by lambda() or mu() */
    int let_vars;             /* 1: a variable stands for let(its expression) (formulate_let) */
    mblx_id *derlet;          /* let_vars: the lets made by der(P) of a velocity-free P, each then P */
    int nderlet, derlet_cap;
    int let_first;            /* 1: the whole load parses with let_vars, once (model_let_first) */
    signed char *vdeg;        /* formulate.c structural_degree_within's degrees by node (nvdeg) */
    size_t nvdeg;
    unsigned char *term_row;  /* m: 1 for the constraints a structured term evaluates (claim_rows) */
    int var_routine0;         /* variables from this index on are user routines' outputs (routines.c) */
} loader;

/* small helpers (dae_helpers.c) */
char *model_str_dup(const char *s);

/* names (names.c) */
uint64_t model_name_hash(const char *s, size_t n);
void model_name_index_reset(void);
int model_find_name(const mbl_src_list *l, const char *name, size_t len);
int model_check_names(loader *L);
int model_take_speeds(loader *L);

/* held velocities keyed by an expression (held.c): taken out of `velocities:` before the speeds,
 * formulated with the outputs, freed with the model */
int model_take_held(loader *L);
int model_formulate_held(loader *L);
void model_held_free(mbl_model *md);
/* trim: targets, accelerations and free inputs of `at: trim` (model/trim.c) */
int model_formulate_trim(loader *L);
void model_trim_free(mbl_model *md);
/* the trim's one tape (md->tape_trim, after the trim is formulated): 0, or the status */
int model_compile_trim(mbl_model *md, mbl_status *st);

/* parsing and the resolver (resolve.c) */
mblx_id model_total_der(mbl_model *md, mblx_id e);
/* model_total_der(md, e) as the sum of terms[0 .. count) (mblx__total_der_terms: terms holds
 * MBLX_FLATTEN_MAX), for a caller that adds it in a larger sum (the EOM rows: d/dt(dT/dv_i) is not
 * made); the count, 0 on failure */
size_t model_total_der_terms(mbl_model *md, mblx_id e, mblx_id *terms);
/* The seeds of the model's total derivatives by symbol, made once for many derivatives under them
 * (the constraint rows and the EOM rows): md->nsym entries, by symbol index: the node its time
 * derivative is + 2 (q_j -> v_j, v_j -> a_j, X_j -> Xdot_j, t -> 1), 1 for any other symbol
 * (constant in time): the map of mblx__total_der_map (src/expr/gradient_terms.h), under which it
 * gives model_total_der's nodes. Allocated (mbl_free); NULL out of memory. */
uint32_t *model_total_der_seeds(mbl_model *md);
/* model_total_der or model_total_der_terms under seeds (NULL: without): the EOM and constraint rows' */
mblx_id model_total_der_by(mbl_model *md, const uint32_t *seeds, mblx_id e, mblx_id *terms, size_t *nt);
/* the constraint row groups of F (Phi and its two time derivatives, nh and its first) */
void model_constraint_rows(mbl_model *md, int m, const mblx_id *Phi, int k, const mblx_id *nh, mblx_id *F);
int model_depends_on_block(const mbl_model *md, mblx_id e, int blk);
/* The unknown blocks (MBL_BLK_A .. MBL_BLK_R) that e depends on, bit 1u << blk for each, from one
 * pass over its dependence set. */
unsigned model_dep_blocks(const mbl_model *md, mblx_id e);
int model_parse_item(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out);
/* variable i's node: its text parsed, or a user routine's output (resolve.c) */
int model_parse_variable(loader *L, int i, const char *what, mblx_id *out);
int model_parse_item_text(loader *L, const mbl_src_item *it, int scope, const char *what, mblx_id *out);
int model_parse_equation(loader *L, const mbl_src_item *it, const char *what, mblx_id *out);
int model_eval_params(loader *L, mblx_id e, const mbl_src_item *it, const char *what, double *val);
int model_load_value(loader *L, const mbl_src_item *it, const char *what, double *val, mblx_id *node);

/* the user's expressions, for messages (explain.c) */
void model_variable_what(char *buf, size_t len, const mbl_src_item *it);
int model_record_srcx(loader *L, const mbl_src_item *it, const char *what, mblx_id e);
int model_check_defined(loader *L, const mbl_src_item *it, const char *what, mblx_id e);
int model_record_expr(loader *L, const mbl_src_item *it, const char *what, mblx_id e);
void model_free_exprs(mbl_model *md);

/* symbols and values (symbols.c) */
int model_create_symbols(loader *L);
/* prefix, k > 0 in decimal and suffix ('\0': none) in buf, which has room for the prefix and 16
 * more characters; returns the length ("constraint 12", "lambda[3]": snprintf costs 15 M
 * instructions over the 10^4-loop four-bar's 20,000 constraints) */
size_t model_indexed_text(char *buf, const char *prefix, int k, char suffix);
int model_load_values(loader *L, const mbl_setting *sets, int nsets);

/* the residual rows (formulate.c) */
int model_formulate(loader *L);

/* the structured terms (formulate_terms.c; each term's entries in model/terms/term.h's table):
 * 1 when the source has any; the constraint rows they evaluate themselves marked in L->term_row
 * (allocated when a term claims rows; before the rows are formulated); their formulation, after
 * the EOM rows */
int model_terms_in_src(const mbl_src *s);
int model_terms_claim_rows(loader *L);
int model_formulate_terms(loader *L);

/* the rows through let nodes (formulate_let.c). parts: the kinetic and potential energies, the
 * dissipation and the constraints already parsed with lets (a let-first load), or NULL to parse them
 * here. */
typedef struct model_let_parts {
    mblx_id T, V, D;
    const mblx_id *Phi, *nh;
} model_let_parts;
int model_formulate_let(loader *L, const mblx_id *Fgen, const model_let_parts *parts);
int model_let_first(const loader *L);
int model_unlet(mblx_graph *g, size_t n, mblx_id *e);

/* the drawing read as expressions (read_draw.c) */
int model_read_draw(loader *L, const mbl_src *s);

/* compiling (compile.c) */
int model_compile_draw(mbl_model *md, mbl_status *st);
int model_compile(mbl_model *md, mbl_status *st);

/* checks (checks.c) */
int model_check_mass(const mbl_model *md, const mbl_src *s, mbl_status *st);

#endif
