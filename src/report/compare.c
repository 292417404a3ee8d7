/* The `mblin compare` table (text) and its JSON form. */
#include <math.h>
#include <stdio.h>

#include "mblin/json.h"
#include "mblin/report.h"

int mbl_report_compare(FILE *f, const mbl_model *model, const mbl_comparison *c, int json)
{
    mbl_model_info info;
    mbl_model_get_info(model, &info);
    if (json) {
        fprintf(f, "{\"schema_version\": %d, \"model\": ", MBL_JSON_SCHEMA_VERSION);
        mbl_json_string(f, info.file ? info.file : "");
        fputs(", \"reference\": ", f);
        mbl_json_string(f, c->reference);
        fputs(", \"methods\": [", f);
        for (int i = 0; i < c->nrows; i++) {
            const mbl_compare_row *r = &c->rows[i];
            fputs(i ? ",\n  {\"method\": " : "\n  {\"method\": ", f);
            mbl_json_string(f, r->method);
            fprintf(f, ", \"ok\": %s, \"seconds\": ", r->ok ? "true" : "false");
            mbl_json_number(f, r->ok ? r->seconds : NAN, 17, 0);
            fprintf(f, ", \"physical_eigenvalues\": %d, \"max_rel_deviation\": ", r->nphys);
            mbl_json_number(f, r->max_rel_dev >= 0 ? r->max_rel_dev : NAN, 17, 0);
            fputs(", \"error_estimate\": ", f);
            mbl_json_number(f, r->err_est, 17, 0);
            fputs(", \"notes\": ", f);
            mbl_json_string(f, r->note);
            fputs(", \"states\": ", f);
            mbl_json_string(f, r->ok ? r->states : "");
            fprintf(f, ", \"user_states\": %s", r->ok && r->user_states ? "true" : "false");
            fputc('}', f);
        }
        fputs("]}\n", f);
    } else {
        fprintf(f, "%s: n = %d, m = %d; deviations relative to %s\n\n", info.file ? info.file : "", info.ncoord,
                info.nhol, c->reference[0] ? c->reference : "(no exact method ran)");
        fprintf(f, "%-11s %12s %6s %12s %10s  %s\n", "method", "time (ms)", "eigs", "max rel dev", "err est", "notes");
        for (int i = 0; i < c->nrows; i++) {
            const mbl_compare_row *r = &c->rows[i];
            if (!r->ok) {
                fprintf(f, "%-11s %12s %6s %12s %10s  %s\n", r->method, "-", "-", "-", "-", r->note);
                continue;
            }
            char dev[32];
            if (r->max_rel_dev >= 0) snprintf(dev, sizeof dev, "%.2e", r->max_rel_dev);
            else snprintf(dev, sizeof dev, "n/a");
            fprintf(f, "%-11s %12.4f %6d %12s %10.2e  %s\n", r->method, 1e3 * r->seconds, r->nphys, dev, r->err_est,
                    r->note);
        }
        /* which states each method's linear model is in (x = [S; W]) */
        fputs("\nstates (position level; velocity level):\n", f);
        for (int i = 0; i < c->nrows; i++) {
            const mbl_compare_row *r = &c->rows[i];
            if (!r->ok) continue;
            fprintf(f, "%-11s %-5s %s\n", r->method, !r->states[0] ? "-" : r->user_states ? "user" : "own",
                    r->states[0] ? r->states : "(not formed: partial spectrum)");
        }
    }
    return ferror(f) ? MBL_EIO : 0;
}
