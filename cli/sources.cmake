set(MBLIN_CLI_SOURCES
  cli/main.c
  cli/cli_util.c
  cli/cmd_sweep.c
  cli/startup.c
  cli/cmd_sensitivity.c
  cli/cmd_codegen.c
)
