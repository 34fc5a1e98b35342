/* glibc's symbol aliasing and versioning: the functions are named on the command line instead. */
#define libm_alias_float(a, b)
#define libm_alias_float_other(a, b)
#define libm_alias_finite(a, b)
#define hidden_def(x)
#define libm_hidden_def(x)
#define strong_alias(a, b)
#define weak_alias(a, b)
#define versioned_symbol(lib, local, sym, ver)
