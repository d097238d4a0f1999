/* vmath_fn.h: the vector math of vmath.h, written once over a vector width.
 *
 * vmath.h includes this file once per width it builds (8 lanes with AVX2,
 * 16 more with AVX-512), after defining the names below; every function is
 * the same sequence of IEEE operations at either width, so an element's
 * value never depends on which width computed it (the fused executor's
 * vector programs run 16 lanes where the per-op kernels run 8, and their
 * results must agree bit for bit).
 *
 *   VT              the vector type             VFN(name)   the function's name
 *   VSET(x)         broadcast a float           VSETI(n)    broadcast an int
 *   VADD VSUB VMUL VDIV VMIN VMAX VFMA VFNMA    (as _mm256_*_ps)
 *   VADDI VSLLI     integer lanes               VCASTI VCASTF   reinterpret
 *   VZERO_LT(y, x, c)   y with lanes where x < c (ordered) set to 0
 *   VNAN_KEEP(r, a)     r with lanes where a is NaN replaced by a
 *   VTI             the integer vector type     VSRAI       arithmetic shift right
 *   VANDB VANDNB VORB VXORB   bitwise and, and-not (~a & b), or, xor of float vectors
 *   VANY_GT(a, c)   nonzero when some lane of a is > c
 *   VLANES          lanes                       VLOADU VSTOREU  unaligned load / store
 *
 * It undefines them at its end, ready for the next width.
 */

/* e^x; see vmath.h for the method and its accuracy. x <= 89 keeps n <= 128,
 * so 2^(n-1) is a normal float and 2p * 2^(n-1) overflows to +inf by itself
 * exactly when e^x does; x < -86.6 flushes to 0 (it keeps n - 1 >= -126).
 * Adding 1.5 * 2^23 rounds x log2(e) to the integer n and leaves n in the
 * low mantissa bits of t. */
static inline VT VFN(exp)(VT x)
{
    const VT magic = VSET(12582912.0f);
    VT xc = VMIN(VSET(89.0f), x);
    VT t = VFMA(xc, VSET(1.44269504088896341f), magic);
    VT n = VSUB(t, magic);
    VT r = VFNMA(n, VSET(0.693359375f), xc);
    r = VFNMA(n, VSET(-2.12194440e-4f), r);
    /* e^r = 1 + r + r^2 Q(r), Q cubic by Estrin's scheme (short dependency chain) */
    VT r2 = VMUL(r, r);
    VT qa = VFMA(VSET(1.6667114465e-01f), r, VSET(4.9999231790e-01f));
    VT qb = VFMA(VSET(8.3125249458e-03f), r, VSET(4.1890113276e-02f));
    VT q = VFMA(qb, r2, qa);
    VT p = VFMA(q, r2, VADD(r, VSET(1.0f)));
    VT e = VCASTF(VSLLI(VADDI(VCASTI(t), VSETI(126 - 0x4B400000)), 23));
    return VZERO_LT(VMUL(VADD(p, p), e), x, VSET(-86.6f));
}

/* The core the sigmoid family shares: e^u = p * s for u in [-87, 89]
 * (callers clamp), s = 2^n (+inf for n = 128, so 1 + p s overflows exactly
 * when it should for the sigmoid's purposes) and p = e^r, r = u - n ln2.
 * Fewer operations and a shorter dependency chain than exp: one fused
 * reduction step with ln2 rounded to float, whose small error (n * 1.9e-9)
 * is folded into the linear term, and the scale left to the caller, who
 * merges it into its own multiply-add. The core is latency-bound (the
 * out-of-order window holds few such chains), so every step off the chain
 * counts. */
static inline VT VFN(exp_ps)(VT u, VT *s)
{
    const VT magic = VSET(12582912.0f);
    VT t = VFMA(u, VSET(1.44269504088896341f), magic);
    VT n = VSUB(t, magic);
    VT r = VFNMA(n, VSET(0.693147182464599609f), u);
    VT one_lo = VFNMA(n, VSET(-1.9046542121e-9f), VSET(1.0f));
    VT r2 = VMUL(r, r);
    VT qa = VFMA(VSET(1.6667114465e-01f), r, VSET(4.9999231790e-01f));
    VT qb = VFMA(VSET(8.3125249458e-03f), r, VSET(4.1890113276e-02f));
    VT q = VFMA(qb, r2, qa);
    *s = VCASTF(VSLLI(VADDI(VCASTI(t), VSETI(127 - 0x4B400000)), 23));
    return VFMA(q, r2, VADD(r, one_lo));
}

/* e^u for u <= 0 (softmax's x - max): 0 below -87 (the core's range ends
 * there; -inf gives exactly 0), NaN stays NaN (the scale is a multiply). */
static inline VT VFN(exp_nonpos)(VT u)
{
    VT s, p = VFN(exp_ps)(u, &s);
    return VZERO_LT(VMUL(p, s), u, VSET(-87.0f));
}

/* 1 + e^u for any u: the clamps keep the core's range (NaN passes them:
 * max/min return their second operand when either is NaN). Below -87,
 * e^u < 1.7e-38 vanishes next to 1; from 88.7 up it is +inf. */
static inline VT VFN(one_plus_exp)(VT u)
{
    VT s, uc = VMIN(VSET(89.0f), VMAX(VSET(-87.0f), u));
    VT p = VFN(exp_ps)(uc, &s);
    return VFMA(p, s, VSET(1.0f));
}

/* 1 / (1 + e^-x). The division stays: on this core the divider runs beside
 * the FMA pipes, and a reciprocal estimate plus a Newton step costs three
 * more operations on them (measured slower). */
static inline VT VFN(sigmoid)(VT x)
{
    return VDIV(VSET(1.0f), VFN(one_plus_exp)(VSUB(VSET(0.0f), x)));
}

/* x * sigmoid(x) as x / (1 + e^-x): one division. x = -inf gives
 * -inf / +inf = NaN, as x * sigmoid(x) does. */
static inline VT VFN(silu)(VT x)
{
    return VDIV(x, VFN(one_plus_exp)(VSUB(VSET(0.0f), x)));
}

/* x * sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3): the tanh form of GELU,
 * since 0.5 (1 + tanh(z)) = sigmoid(2z); computed as x / (1 + e^{-2z}). */
static inline VT VFN(gelu_tanh)(VT x)
{
    VT x2 = VMUL(x, x);
    VT mz = VMUL(x, VFMA(x2, VSET(-0.044715f * 1.5957691216057308f), VSET(-1.5957691216057308f)));
    return VDIV(x, VFN(one_plus_exp)(mz));
}

/* tanh(x) = x P(y) / Q(y), y = x^2, both quartics in y, on x clamped to
 * [-9, 9] (tanh is +-1 in float beyond); NaN passes through the clamps.
 * A rational, not e^2x: its chain is about half as long as that of expm1
 * followed by a division (the six-op benchmark chain ran 22% faster per
 * thread in cache). P and Q go by Horner's rule: the vector programs run
 * eight vectors side by side, enough to hide the longer chain, and it
 * saves Estrin's y^2 (4% faster on chain6's program in cache, 0.134 ->
 * 0.129 ns/element). The coefficients are a minimax fit of tanh(x)/x on
 * [0, 9] (scripts/fit_tanh.py, relative error 2.1e-8), then each moved by
 * a few float ulps to lower the error of the float evaluation: at most
 * 4.94 ulps over every float (the approximation itself contributes under
 * 1; the rest is rounding, as the result sits near 1 for most of the
 * range). x + xy P1(y) and 1 + y Q1(y) keep the leading terms exact for
 * small x. The clamp to [-1, 1] at the end stops rounding from giving
 * 1.0000001 near x = 8. */
static inline VT VFN(tanh)(VT x)
{
    VT xc = VMAX(VSET(-9.0f), VMIN(VSET(9.0f), x));
    VT y = VMUL(xc, xc), xy = VMUL(xc, y);
    VT p = VFMA(VSET(1.341914757e-08f), y, VSET(2.066076922e-05f));
    VT q = VFMA(VSET(7.804450775e-07f), y, VSET(3.290988971e-04f));
    p = VFMA(p, y, VSET(3.498966107e-03f));
    q = VFMA(q, y, VSET(2.589009330e-02f));
    p = VFMA(p, y, VSET(1.338395476e-01f));
    q = VFMA(q, y, VSET(4.671727419e-01f));
    VT n = VFMA(xy, p, xc);
    VT d = VFMA(y, q, VSET(1.0f));
    return VMIN(VSET(1.0f), VMAX(VSET(-1.0f), VDIV(n, d)));
}

/* hardsigmoid and hardswish as PyTorch's CPU kernels compute them,
 * min(max(x + 3, 0), 6) / 6 and x * that / 6, a division and not a multiply
 * by 1/6, so that values agree with torch to the bit. The constant goes
 * first in max and min so that NaN comes through (they return the second
 * operand when either is NaN); hardswish(-inf) is -inf * 0 = NaN, as in
 * torch. Every step is one IEEE operation, so the scalar code in
 * elemwise.c gives the same bits. */
static inline VT VFN(hard6)(VT x)
{
    return VMIN(VSET(6.0f), VMAX(VSET(0.0f), VADD(x, VSET(3.0f))));
}

static inline VT VFN(hardsigmoid)(VT x)
{
    return VDIV(VFN(hard6)(x), VSET(6.0f));
}

static inline VT VFN(hardswish)(VT x)
{
    return VDIV(VMUL(x, VFN(hard6)(x)), VSET(6.0f));
}

/* sin or cos (cosine = 1) from x = q pi/2 + r: q is the nearest integer
 * to x 2/pi (adding 1.5 * 2^23 rounds it and leaves q in t's low mantissa
 * bits, as in exp), r = x - q pi/2 by a three-part Cody-Waite reduction
 * with FMAs (pi/2 split into floats), |r| <= pi/4. On that interval
 * Cephes's minimax polynomials give sin r and cos r; the quadrant
 * (q + cosine) & 3 picks one (bit 0) and its sign (bit 1). NaN and +-inf
 * give NaN by the arithmetic. Past |x| = 8192 the reduction loses bits of
 * r, so those lanes are recomputed by libm (VFN(sincos_big)): rare in
 * models, and the same per element at every width. */
static inline VT VFN(sincos_red)(VT x, int cosine)
{
    const VT magic = VSET(12582912.0f);
    VT t = VFMA(x, VSET(0.636619746685028076f), magic);
    VT q = VSUB(t, magic);
    VT r = VFNMA(q, VSET(1.57079637050628662109375f), x);
    r = VFNMA(q, VSET(-4.371138828673793e-08f), r);
    r = VFNMA(q, VSET(-1.7151245100058819e-15f), r);
    VT z = VMUL(r, r);
    VT sp = VFMA(VSET(-1.9515295891e-4f), z, VSET(8.3321608736e-3f));
    sp = VFMA(sp, z, VSET(-1.6666654611e-1f));
    VT sv = VFMA(VMUL(sp, z), r, r);
    VT cp = VFMA(VSET(2.443315711809948e-5f), z, VSET(-1.388731625493765e-3f));
    cp = VFMA(cp, z, VSET(4.166664568298827e-2f));
    VT cv = VFMA(VMUL(cp, z), z, VFNMA(VSET(0.5f), z, VSET(1.0f)));
    VTI n = VADDI(VCASTI(t), VSETI(cosine));
    VT odd = VCASTF(VSRAI(VSLLI(n, 31), 31));          /* all ones where bit 0 is set */
    VT res = VORB(VANDB(odd, cv), VANDNB(odd, sv));
    return VXORB(res, VANDB(VCASTF(VSLLI(n, 30)), VSET(-0.0f)));   /* bit 1: the sign */
}

static VT VFN(sincos_big)(VT x, VT y, int cosine)
{
    float xs[VLANES], ys[VLANES];
    VSTOREU(xs, x);
    VSTOREU(ys, y);
    for (int i = 0; i < VLANES; i++)
        if (fabsf(xs[i]) > 8192.0f)
            ys[i] = cosine ? cosf(xs[i]) : sinf(xs[i]);
    return VLOADU(ys);
}

static inline VT VFN(sin)(VT x)
{
    VT y = VFN(sincos_red)(x, 0);
    if (VANY_GT(VANDB(x, VCASTF(VSETI(0x7FFFFFFF))), VSET(8192.0f)))
        y = VFN(sincos_big)(x, y, 0);
    return y;
}

static inline VT VFN(cos)(VT x)
{
    VT y = VFN(sincos_red)(x, 1);
    if (VANY_GT(VANDB(x, VCASTF(VSETI(0x7FFFFFFF))), VSET(8192.0f)))
        y = VFN(sincos_big)(x, y, 1);
    return y;
}

/* NaN-propagating max/min (maximum / minimum ops): vmaxps returns its
 * second operand when either is NaN, so put b second and then restore a
 * where a is NaN. */
static inline VT VFN(maxnan)(VT a, VT b)
{
    return VNAN_KEEP(VMAX(a, b), a);
}

static inline VT VFN(minnan)(VT a, VT b)
{
    return VNAN_KEEP(VMIN(a, b), a);
}

#undef VT
#undef VFN
#undef VSET
#undef VSETI
#undef VADD
#undef VSUB
#undef VMUL
#undef VDIV
#undef VMIN
#undef VMAX
#undef VFMA
#undef VFNMA
#undef VADDI
#undef VSLLI
#undef VCASTI
#undef VCASTF
#undef VZERO_LT
#undef VNAN_KEEP
#undef VTI
#undef VSRAI
#undef VANDB
#undef VANDNB
#undef VORB
#undef VXORB
#undef VANY_GT
#undef VLANES
#undef VSTOREU
#undef VLOADU
