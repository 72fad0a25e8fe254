// core/check.h — NT_CHECK: aborts on programmer errors (broken invariants), never on user input.
#pragma once

#include <cstdio>
#include <cstdlib>

#define NT_CHECK(cond)                                                            \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "nexttok: internal check failed: %s (%s:%d)\n", #cond, \
                   __FILE__, __LINE__);                                           \
      std::abort();                                                               \
    }                                                                             \
  } while (0)
