/* The C library's float functions that ggml and llama.cpp call, as glibc computes them, for the
   Windows build: linked ahead of mingw-w64's own, whose results differ in the last bit
   (docs/exactness.md, "Windows and Linux"). On x86-64 glibc picks at run time, as here, the
   build of expf, logf, powf, sinf, cosf and sincosf compiled with -mfma -mavx2 where the CPU has both,
   else the SSE2 one; tanhf and erff have one build. */
float g_expf_sse2 (float), g_expf_fma (float), g_logf_sse2 (float), g_logf_fma (float);
float g_powf_sse2 (float, float), g_powf_fma (float, float);
float g_sinf_sse2 (float), g_sinf_fma (float), g_cosf_sse2 (float), g_cosf_fma (float);
void g_sincosf_sse2 (float, float *, float *), g_sincosf_fma (float, float *, float *);
float g_tanhf (float), g_erff (float), g_erfcf (float);

static int use_fma = -1;

static int fma_usable (void)
{
  if (use_fma < 0)
    {
      __builtin_cpu_init ();
      use_fma = __builtin_cpu_supports ("fma") && __builtin_cpu_supports ("avx2");
    }
  return use_fma;
}

float expf (float x) { return fma_usable () ? g_expf_fma (x) : g_expf_sse2 (x); }
float logf (float x) { return fma_usable () ? g_logf_fma (x) : g_logf_sse2 (x); }
float powf (float x, float y) { return fma_usable () ? g_powf_fma (x, y) : g_powf_sse2 (x, y); }
float sinf (float x) { return fma_usable () ? g_sinf_fma (x) : g_sinf_sse2 (x); }
float cosf (float x) { return fma_usable () ? g_cosf_fma (x) : g_cosf_sse2 (x); }
void sincosf (float x, float *s, float *c)
{
  if (fma_usable ())
    g_sincosf_fma (x, s, c);
  else
    g_sincosf_sse2 (x, s, c);
}
float tanhf (float x) { return g_tanhf (x); }
float erff (float x) { return g_erff (x); }
float erfcf (float x) { return g_erfcf (x); }
