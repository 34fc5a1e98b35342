/* What glibc's x86 math-barriers.h does with SSE math: keep the compiler from moving or
   dropping a floating-point operation whose exceptions or rounding matter. */
#define math_opt_barrier(x) ({ __typeof (x) __x; __asm ("" : "=x" (__x) : "0" (x)); __x; })
#define math_force_eval(x) do { __asm __volatile ("" : : "x" (x)); } while (0)
