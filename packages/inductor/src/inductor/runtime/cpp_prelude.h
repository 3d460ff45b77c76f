// Included by every generated C++ kernel. Math written branch-free on plain floats so that
// GCC's `#pragma omp simd` loops vectorize it without -ffast-math: special cases (NaN, inf,
// overflow, subnormal results) are handled by selects, keeping eager's IEEE results.
//
// Only light headers: <cmath> and <algorithm> alone cost ~0.5 s of compile time per kernel
// (more than the kernel itself). libm is reached through GCC's builtins instead, which are
// what <cmath>'s float and double overloads call.
#include <cstdint>
#include <limits>
#include <pthread.h>
#include <type_traits>

#define PTC_INLINE static inline __attribute__((always_inline))

// ptc_libm::f(x): libm's f for float and double, as std::f.
namespace ptc_libm {
// Integer arguments convert to double, as with <cmath>'s integral overloads.
#define PTC_LIBM_UNARY(fn)                                                        \
  PTC_INLINE float fn(float x) { return __builtin_##fn##f(x); }                   \
  PTC_INLINE double fn(double x) { return __builtin_##fn(x); }                    \
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>       \
  PTC_INLINE double fn(T x) { return __builtin_##fn(static_cast<double>(x)); }
#define PTC_LIBM_BINARY(fn)                                                       \
  PTC_INLINE float fn(float x, float y) { return __builtin_##fn##f(x, y); }       \
  PTC_INLINE double fn(double x, double y) { return __builtin_##fn(x, y); }       \
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>       \
  PTC_INLINE double fn(T x, T y) { return __builtin_##fn(static_cast<double>(x), static_cast<double>(y)); }
PTC_LIBM_UNARY(exp) PTC_LIBM_UNARY(exp2) PTC_LIBM_UNARY(expm1) PTC_LIBM_UNARY(log) PTC_LIBM_UNARY(log2)
PTC_LIBM_UNARY(log10) PTC_LIBM_UNARY(log1p) PTC_LIBM_UNARY(sqrt) PTC_LIBM_UNARY(sin) PTC_LIBM_UNARY(cos)
PTC_LIBM_UNARY(tan) PTC_LIBM_UNARY(tanh) PTC_LIBM_UNARY(sinh) PTC_LIBM_UNARY(cosh) PTC_LIBM_UNARY(asin)
PTC_LIBM_UNARY(acos) PTC_LIBM_UNARY(atan) PTC_LIBM_UNARY(asinh) PTC_LIBM_UNARY(acosh) PTC_LIBM_UNARY(atanh)
PTC_LIBM_UNARY(erf) PTC_LIBM_UNARY(erfc) PTC_LIBM_UNARY(floor) PTC_LIBM_UNARY(ceil) PTC_LIBM_UNARY(trunc)
PTC_LIBM_UNARY(nearbyint) PTC_LIBM_UNARY(lgamma)
PTC_LIBM_BINARY(fmod) PTC_LIBM_BINARY(pow) PTC_LIBM_BINARY(atan2) PTC_LIBM_BINARY(hypot) PTC_LIBM_BINARY(copysign)
#undef PTC_LIBM_UNARY
#undef PTC_LIBM_BINARY
PTC_INLINE float abs(float x) { return __builtin_fabsf(x); }
PTC_INLINE double abs(double x) { return __builtin_fabs(x); }
// The sign bit read through the bits (NaN's too, as eager's signbit), not by __builtin_signbit:
// GCC 12 vectorizes that builtin after a bf16 load into a shift of a float vector it cannot emit
// (internal compiler error "unrecognizable insn"; op_db's signbit in bfloat16).
template <typename T> PTC_INLINE bool signbit(T x) {
  if constexpr (std::is_same_v<T, float>) { uint32_t b; __builtin_memcpy(&b, &x, 4); return (b >> 31) != 0; }
  else if constexpr (std::is_same_v<T, double>) { uint64_t b; __builtin_memcpy(&b, &x, 8); return (b >> 63) != 0; }
  else return x < 0;
}
}  // namespace ptc_libm

template <typename T> PTC_INLINE T ptc_min(T a, T b) { return b < a ? b : a; }
template <typename T> PTC_INLINE T ptc_max(T a, T b) { return a < b ? b : a; }

PTC_INLINE float ptc_bits_to_float(uint32_t b) { float f; __builtin_memcpy(&f, &b, 4); return f; }
PTC_INLINE uint32_t ptc_float_to_bits(float f) { uint32_t b; __builtin_memcpy(&b, &f, 4); return b; }

// bfloat16 is stored as its raw bits; conversions round to nearest even and keep NaN quiet.
PTC_INLINE float bf16_to_float(uint16_t v) { return ptc_bits_to_float(static_cast<uint32_t>(v) << 16); }
PTC_INLINE uint16_t float_to_bf16(float f) {
  uint32_t b = ptc_float_to_bits(f);
  uint32_t rounded = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>(f != f ? ((b >> 16) | 0x40u) : rounded);
}

// 2^n for integer-valued n in [-126, 127].
PTC_INLINE float ptc_pow2i(int32_t n) { return ptc_bits_to_float(static_cast<uint32_t>(n + 127) << 23); }

PTC_INLINE float ptc_exp(float x) {
  const float inf = std::numeric_limits<float>::infinity();
  // Results below 2^-126 (x < -87.3) are subnormal, which an exponent-field add cannot make:
  // those inputs are shifted up by 25*ln2 and the result scaled back by 2^-25.
  bool tiny = x < -86.5f;
  float xs = tiny ? x + 17.328679513998633f : x;
  // Inputs whose result is 0 (x < -103.97, as a masked softmax's -FLT_MAX or -inf; shifted, below
  // -86.64) compute exp(0) instead, selected to 0 at the end: clamped to -88 they made subnormal
  // intermediates, a ~100-cycle microcode assist each on x86. -86.75 leaves a margin below the
  // shifted -103.97 (those between cost the assist, rarely).
  xs = xs > 89.0f ? 89.0f : (xs < -86.75f ? 0.0f : xs);
  // Round-to-nearest by the 1.5*2^23 trick: exact in IEEE arithmetic, no fast-math needed.
  float k = (xs * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xs - k * 0.693145751953125f;
  r = r - k * 1.428606765330187045e-06f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  float result = ptc_bits_to_float(ptc_float_to_bits(p) + (static_cast<uint32_t>(static_cast<int32_t>(k)) << 23));
  result = tiny ? result * 2.98023223876953125e-08f : result;
  // 88.72283935546875f is the first float above ln(FLT_MAX): there k = 128 and p = 1 would carry
  // into the exponent's all-ones pattern (NaN), so it takes the overflow branch too.
  result = x >= 88.72283935546875f ? inf : result;
  result = x < -103.972084f ? 0.0f : result;
  return x != x ? x : result;
}

PTC_INLINE float ptc_expm1(float x) {
  float x2 = x * x;
  float p = 1.0f / 3628800.0f;
  p = p * x + 1.0f / 362880.0f;
  p = p * x + 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  float small = x + x2 * p;
  float large = ptc_exp(x) - 1.0f;
  return ptc_libm::abs(x) < 0.5f ? small : large;
}

PTC_INLINE float ptc_log(float x) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  bool subnormal = x < 1.17549435e-38f;
  float xs = subnormal ? x * 8388608.0f : x;  // scale subnormals into the normal range
  uint32_t b = ptc_float_to_bits(xs);
  int32_t e = static_cast<int32_t>((b >> 23) & 0xFF) - 127;
  float m = ptc_bits_to_float((b & 0x007FFFFFu) | 0x3F800000u);  // in [1, 2)
  bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  float ef = static_cast<float>(big ? e + 1 : e) - (subnormal ? 23.0f : 0.0f);
  float s = (m - 1.0f) / (m + 1.0f);
  float s2 = s * s;
  float p = 1.0f / 11.0f;
  p = p * s2 + 1.0f / 9.0f;
  p = p * s2 + 1.0f / 7.0f;
  p = p * s2 + 1.0f / 5.0f;
  p = p * s2 + 1.0f / 3.0f;
  p = p * s2 + 1.0f;
  float result = ef * 0.693147180559945309f + 2.0f * s * p;
  result = x == inf ? inf : result;
  result = x == 0.0f ? -inf : result;
  result = x < 0.0f ? nan : result;
  return x != x ? x : result;
}

PTC_INLINE float ptc_log1p(float x) {
  // log(u) * x / (u - 1) with u = 1 + x cancels the rounding of 1 + x (Goldberg's trick).
  float u = 1.0f + x;
  float d = u - 1.0f;
  float l = ptc_log(u);
  float result = d == 0.0f ? x : l * (x / d);
  result = u == std::numeric_limits<float>::infinity() ? u : result;
  return x != x ? x : result;
}

// tanh and erf: odd rational approximations x*P(x^2)/Q(x^2) on a clamped range (the
// minimax fits used by Eigen and XLA); no exp, no branches, a few ulp from libm.
PTC_INLINE float ptc_tanh(float x) {
  float xc = x > 7.99881172180175781f ? 7.99881172180175781f : (x < -7.99881172180175781f ? -7.99881172180175781f : x);
  float x2 = xc * xc;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  float result = xc * p / q;
  result = ptc_libm::abs(x) < 0.0004f ? x : result;
  result = ptc_libm::abs(x) >= 9.0f ? (x > 0.0f ? 1.0f : -1.0f) : result;  // exactly +-1, as libm
  return x != x ? x : result;
}

PTC_INLINE float ptc_sigmoid(float x) { return 1.0f / (1.0f + ptc_exp(-x)); }

PTC_INLINE float ptc_erf(float x) {
  float xc = x > 4.0f ? 4.0f : (x < -4.0f ? -4.0f : x);
  float x2 = xc * xc;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  float result = xc * p / q;
  return x != x ? x : result;
}

// Set by a kernel meeting an input eager raises for: integer division by zero (x86 would trap
// and kill the process), or an index tensor holding a value outside the dimension it indexes (the
// load would read outside the tensor). Each kernel clears it on entry and returns it; the ctypes
// loader (runtime/cpp_build.py) raises the matching Python error. Kernels that may set it hold
// ptc_error_lock for the whole call, so concurrent calls from other threads cannot clobber it.
static int ptc_error_flag = 0;
// A pthread mutex, not std::mutex: <mutex> alone cost ~0.7 s of compile time per kernel.
static pthread_mutex_t ptc_error_lock = PTHREAD_MUTEX_INITIALIZER;
// Held for the scope of a kernel call (RAII, so every return unlocks).
struct ptc_one_call_lock {
  ptc_one_call_lock() { pthread_mutex_lock(&ptc_error_lock); }
  ~ptc_one_call_lock() { pthread_mutex_unlock(&ptc_error_lock); }
  ptc_one_call_lock(const ptc_one_call_lock&) = delete;
  ptc_one_call_lock& operator=(const ptc_one_call_lock&) = delete;
};
// The codes of runtime/kernel_errors.py.
#define PTC_ZERO_DIVISION 1
#define PTC_INDEX_OUT_OF_BOUNDS 2
#define PTC_INDEX_OUT_OF_BOUNDS_RUNTIME 3
#define PTC_OUT_OF_MEMORY 4

extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_max_threads(void);
// One inner row of each long scratch buffer (symbolic or too long for the stack) per thread,
// allocated once per call; a thread's rows are `row(k)` inside the parallel loops (outside
// them: thread 0's, shared by the threads of a parallel inner loop, as a stack array would be).
struct ptc_scratch_rows {
  char* data;
  int64_t stride;  // bytes per row: 8-byte elements at most, 64-byte aligned (no false sharing)
  int count;
  ptc_scratch_rows(int count_, int64_t elements) : count(count_) {
    stride = (elements * 8 + 63) / 64 * 64;
    uint64_t bytes = static_cast<uint64_t>(stride) * count * omp_get_max_threads() + 64;
    data = static_cast<char*>(__builtin_malloc(bytes));
  }
  ~ptc_scratch_rows() { __builtin_free(data); }
  ptc_scratch_rows(const ptc_scratch_rows&) = delete;
  ptc_scratch_rows& operator=(const ptc_scratch_rows&) = delete;
  char* row(int k) const {
    char* base = data + (64 - reinterpret_cast<uintptr_t>(data) % 64);
    return base + (static_cast<int64_t>(omp_get_thread_num()) * count + k) * stride;
  }
};
template <typename T> PTC_INLINE T ptc_divisor(T b) {
  if (b == 0) { ptc_error_flag = PTC_ZERO_DIVISION; return 1; }
  return b;
}
template <typename T> PTC_INLINE T ptc_truncdiv(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return ptc_libm::trunc(a / b);
  else return a / ptc_divisor(b);
}

template <typename T> PTC_INLINE T ptc_maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a != a ? a : (b != b ? b : (a > b ? a : b));
  else return a > b ? a : b;
}
template <typename T> PTC_INLINE T ptc_minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a != a ? a : (b != b ? b : (a < b ? a : b));
  else return a < b ? a : b;
}
template <typename T> PTC_INLINE T ptc_floordiv(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // ATen's div_floor_floating: exact for large quotients, NaN for inf / finite.
    if (b == 0) return a / b;
    T m = ptc_libm::fmod(a, b);
    T d = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
    if (d == 0) return ptc_libm::copysign(T(0), a / b);
    T f = ptc_libm::floor(d);
    return d - f > T(0.5) ? f + 1 : f;
  } else { b = ptc_divisor(b); T q = a / b; return ((a % b != 0) && ((a < 0) != (b < 0))) ? q - 1 : q; }
}
template <typename T> PTC_INLINE T ptc_fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return ptc_libm::fmod(a, b);
  else return a % ptc_divisor(b);  // C's % truncates: the remainder takes the dividend's sign, as fmod
}
template <typename T> PTC_INLINE T ptc_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = ptc_libm::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    b = ptc_divisor(b);
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
}
template <typename T> PTC_INLINE T ptc_sign(T a) {
  return static_cast<T>((T(0) < a) - (a < T(0)));  // sign(NaN) is 0 in eager too
}
template <typename T> PTC_INLINE bool ptc_isnan(T a) { if constexpr (std::is_floating_point_v<T>) return a != a; else return false; }
template <typename T> PTC_INLINE bool ptc_isinf(T a) {
  if constexpr (std::is_floating_point_v<T>) return ptc_libm::abs(a) == std::numeric_limits<T>::infinity(); else return false;
}
// Integer powers as aten's powi: repeated squaring with wrap-around; a negative exponent gives
// 1 for base 1, +-1 for base -1 (by the exponent's parity) and 0 for any other base.
template <typename T> PTC_INLINE T ptc_pow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return ptc_libm::pow(a, b);
  else {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return a == 1 ? T(1) : (a == -1 ? ((b & 1) ? T(-1) : T(1)) : T(0));
    }
    T r = 1; while (b > 0) { if (b & 1) r *= a; a *= a; b >>= 1; } return r;
  }
}

// A tensor-valued index, negative ones counted from the end as in eager; out of range it flags
// the error and reads element 0 instead, so the kernel finishes without touching foreign memory.
PTC_INLINE int64_t ptc_index_in_bounds(int64_t i, int64_t size, int error) {
  i = i < 0 ? i + size : i;
  if (i < 0 || i >= size) { ptc_error_flag = error; return 0; }
  return i;
}
