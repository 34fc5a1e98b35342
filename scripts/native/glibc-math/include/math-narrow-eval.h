#define math_narrow_eval(x) (x)
