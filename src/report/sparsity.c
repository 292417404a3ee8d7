/* The sparsity of a method's matrices for a person, as JSON, and as SVG spy plots
 * (mblin/sparsity.h; `mblin sparsity`). */
#include <stdio.h>
#include <string.h>

#include "mblin/json.h"
#include "mblin/sparsity.h"

/* the side of the plotted square in pixels, whatever the order (a cell of at least
 * SPY_CELL_MIN pixels: the picture grows beyond it for matrices of more than 480 rows) */
#define SPY_SIDE 480.0
#define SPY_CELL_MIN 1.0
#define SPY_MARGIN 40.0

/* factor entries per entry factored (the fill ratio), or -1 when not factored */
static double fill_ratio(const mbl_sparse_matrix *a)
{
    return a->factor_nnz >= 0 && a->factored_nnz > 0 ? a->factor_nnz / a->factored_nnz : -1;
}

static void text_table(FILE *f, const mbl_sparsity *s)
{
    fprintf(f, "method %s: n = %d coordinates, m = %d constraints%s\n", s->method, s->n, s->m,
            s->k ? ", with non-holonomic ones" : "");
    fprintf(f, "  %-10s %13s %10s %8s  %-8s %10s %10s %6s\n", "matrix", "order", "nonzeros", "density", "factor",
            "factored", "factor nz", "fill");
    for (int i = 0; i < s->nmat; i++) {
        const mbl_sparse_matrix *a = &s->mat[i];
        char order[32];
        snprintf(order, sizeof order, "%d x %d", a->rows, a->cols);
        double cells = (double)a->rows * (double)a->cols;
        fprintf(f, "  %-10s %13s %10d %7.3g%%  ", a->name, order, a->nnz, cells > 0 ? 100.0 * a->nnz / cells : 0.0);
        if (a->factor_nnz >= 0)
            fprintf(f, "%-8s %10d %10.0f %6.2f\n", a->factor, a->factored_nnz, a->factor_nnz, fill_ratio(a));
        else
            fprintf(f, "%-8s %10s %10s %6s\n", "-", "-", "-", "-");
    }
    for (int i = 0; i < s->nmat; i++)
        if (s->mat[i].note[0]) fprintf(f, "  note: %s: %s\n", s->mat[i].name, s->mat[i].note);
}

static void json_object(FILE *f, const mbl_sparsity *s)
{
    fputs("{\"method\": ", f);
    mbl_json_string(f, s->method);
    fprintf(f, ", \"n\": %d, \"m\": %d, \"k\": %d, \"matrices\": [", s->n, s->m, s->k);
    for (int i = 0; i < s->nmat; i++) {
        const mbl_sparse_matrix *a = &s->mat[i];
        fputs(i ? ", {\"name\": " : "{\"name\": ", f);
        mbl_json_string(f, a->name);
        fputs(", \"what\": ", f);
        mbl_json_string(f, a->what);
        fprintf(f, ", \"rows\": %d, \"cols\": %d, \"nnz\": %d, \"factor\": ", a->rows, a->cols, a->nnz);
        if (a->factor_nnz >= 0) {
            mbl_json_string(f, a->factor);
            fprintf(f, ", \"factor_nnz\": %.0f, \"factored_nnz\": %d", a->factor_nnz, a->factored_nnz);
        } else {
            fputs("null, \"factor_nnz\": null, \"factored_nnz\": null", f);
        }
        fputs(", \"note\": ", f);
        mbl_json_string(f, a->note);
        fputc('}', f);
    }
    fputs("]}", f);
}

int mbl_report_sparsity(FILE *f, const mbl_sparsity *s, int json)
{
    if (json) json_object(f, s);
    else text_table(f, s);
    return ferror(f) ? MBL_EIO : 0;
}

int mbl_sparsity_svg(FILE *f, const mbl_sparse_matrix *a)
{
    int big = a->rows > a->cols ? a->rows : a->cols;
    double cell = big > 0 ? SPY_SIDE / big : SPY_SIDE;
    if (cell < SPY_CELL_MIN) cell = SPY_CELL_MIN;
    double w = a->cols * cell + 2 * SPY_MARGIN, h = a->rows * cell + 2 * SPY_MARGIN;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", w, h, w, h);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    /* the name and counts are mblin's own text (names like M_q): nothing to escape */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s: %d x %d, nnz = %d", w / 2, SPY_MARGIN / 2,
            a->name, a->rows, a->cols, a->nnz);
    if (a->factor_nnz >= 0) fprintf(f, ", %s factor nnz = %.0f", a->factor, a->factor_nnz);
    fputs("</text>\n", f);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.3f\" height=\"%.3f\" fill=\"none\" stroke=\"#888\"/>\n",
            SPY_MARGIN, SPY_MARGIN, a->cols * cell, a->rows * cell);
    fprintf(f, "<g fill=\"#1f4e9c\">\n");
    for (int q = 0; q < a->nnz; q++)
        fprintf(f, "<rect class=\"nz\" x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\"/>\n",
                SPY_MARGIN + a->col[q] * cell, SPY_MARGIN + a->row[q] * cell, cell, cell);
    fputs("</g>\n</svg>\n", f);
    return ferror(f) ? MBL_EIO : 0;
}
