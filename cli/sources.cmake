set(MBLIN_CLI_SOURCES
  cli/main.c
  cli/startup.c
)
