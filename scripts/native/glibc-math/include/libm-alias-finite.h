#include "libm-alias-float.h"
