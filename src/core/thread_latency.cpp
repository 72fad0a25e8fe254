// core/thread_latency.cpp — sched_setattr with sched_runtime for SCHED_OTHER (see thread_latency.h).
#include "core/thread_latency.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace nt {
namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h), size 56 (SCHED_ATTR_SIZE_VER1).
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};
static_assert(sizeof(SchedAttr) == 56);

bool get_attr(SchedAttr& a) {
#ifdef SYS_sched_getattr
  std::memset(&a, 0, sizeof(a));
  return syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) == 0;
#else
  (void)a;
  return false;
#endif
}

}  // namespace

bool request_short_slice(uint32_t slice_us) {
#ifdef SYS_sched_setattr
  SchedAttr a;
  if (!get_attr(a) || a.sched_policy != SCHED_OTHER) return false;  // leave real-time or batch policies alone
  a.size = sizeof(a);
  a.sched_flags = 0;
  a.sched_runtime = uint64_t(slice_us) * 1000;
  if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) return false;
  return current_slice_us() == slice_us;  // kernels before 6.12 accept the call but keep their slice
#else
  (void)slice_us;
  return false;
#endif
}

uint32_t current_slice_us() {
  SchedAttr a;
  if (!get_attr(a)) return 0;
  return uint32_t(a.sched_runtime / 1000);
}

}  // namespace nt
