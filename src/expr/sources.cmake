list(APPEND MBLIN_SOURCES
  src/expr/graph.c
  src/expr/inspect.c
  src/expr/builders.c
  src/expr/data.c
  src/expr/diff.c
  src/expr/diff_wide.c
  src/expr/diff_memo.c
  src/expr/diff_rules.c
  src/expr/gradient_terms.c
  src/expr/print.c
  src/expr/parse.c
  src/expr/tape.c
  src/expr/tape_share.c
  src/expr/tape_schedule.c
  src/expr/tape_eval.c
  src/expr/tape_forward.c
)
