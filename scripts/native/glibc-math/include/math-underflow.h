/* exceptions only: results do not depend on them */
#define math_check_force_underflow(x) ((void) 0)
#define math_check_force_underflow_nonneg(x) ((void) 0)
