/* mblin simulate --psd: Welch's PSD of simulated signals (cli/sim_psd.c, docs/simulation.md). */
#ifndef MBLIN_CLI_SIM_PSD_H
#define MBLIN_CLI_SIM_PSD_H

#include "mblin/sim.h"

#define PSD_MAX_SIGNALS 64

typedef struct cli_psd {
    const char *names;  /* --psd NAME[,NAME...]: CSV column names of the trajectory */
    const char *csv;    /* --psd-out FILE.csv */
    const char *svg;    /* --psd-svg FILE.svg */
    double segment;     /* --psd-segment SECONDS (0: mbl_psd_welch's default) */
    int npeaks;         /* --psd-peaks K (0: the default) */
} cli_psd;

typedef struct cli_psd_result {
    int n;
    const char *names[PSD_MAX_SIGNALS];
    mbl_psd *P[PSD_MAX_SIGNALS];
    char buf[4096];
} cli_psd_result;

/* before the simulation: the names are the trajectory's, the record holds a segment */
int cli_psd_check(const cli_psd *c, const mbl_model *md, double t0, double t_end, double dt_out, mbl_status *st);
/* the spectra of the trajectory R, written to --psd-out and --psd-svg */
int cli_psd_run(const cli_psd *c, const mbl_model *md, const mbl_sim_result *R, cli_psd_result *out, mbl_status *st);
/* the peaks as text, or `, "psd": [...]` inside simulate's JSON object */
void cli_psd_print(const cli_psd_result *r, int json);
void cli_psd_result_free(cli_psd_result *r);

#endif
