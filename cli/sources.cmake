set(MBLIN_CLI_SOURCES
  cli/main.c
  cli/cmd_sweep.c
  cli/cmd_codegen.c
)
