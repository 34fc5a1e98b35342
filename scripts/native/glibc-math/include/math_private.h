/* The few glibc-internal helpers the float functions use. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#define attribute_hidden
#define __glibc_unlikely(c) __builtin_expect ((c), 0)
#define __glibc_likely(c) __builtin_expect ((c), 1)
#define __set_errno(e) (errno = (e))
#define GET_FLOAT_WORD(i, d) do { float __f = (d); uint32_t __i; memcpy (&__i, &__f, 4); (i) = __i; } while (0)
#define SET_FLOAT_WORD(d, i) do { uint32_t __i = (i); float __f; memcpy (&__f, &__i, 4); (d) = __f; } while (0)
static inline int power_issignalingf (float x)
{
  uint32_t i;
  memcpy (&i, &x, 4);
  return (i & 0x7fffffff) > 0x7f800000 && !(i & 0x00400000);
}
#define issignaling(x) power_issignalingf (x)
float __ieee754_expf (float);
float __expm1f (float);
