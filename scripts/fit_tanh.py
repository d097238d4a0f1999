#!/usr/bin/env python3
"""fit_tanh.py: the minimax fit behind kernels/vec/vmath_fn.h's tanh.

Fits tanh(x)/x ~ P(y)/Q(y), y = x^2, P and Q of degree DP and DQ with
P(0) = Q(0) = 1, minimising the largest relative error over x in [0, C]
(Chebyshev-spaced points) by Lawson's iteration: weighted linear least
squares on P - f Q, the weights multiplied each round by the current
error. Needs mpmath (pip install mpmath); not part of the build.

    python3 scripts/fit_tanh.py [DP DQ C]    (default 4 4 9)

vmath_fn.h then rounds the coefficients to float and moves each by a few
ulps where that lowers the error of the float evaluation, measured over
every float (tests/test_kern_ops.c samples it).
"""
import sys

from mpmath import mp, mpf, tanh, sqrt, cos, pi, matrix, qr_solve

mp.dps = 40


def poly(c, y):
    s = mpf(0)
    for a in reversed(c):
        s = s * y + a
    return s


def fit(dp, dq, c, npts=1500, rounds=120):
    xs = [c / 2 * (1 - cos(pi * (i + mpf(0.5)) / npts)) for i in range(npts)]
    ys = [x * x for x in xs]
    fs = [tanh(x) / x for x in xs]
    w = [mpf(1)] * npts
    q = [mpf(1)] + [mpf(0)] * dq
    best = None
    for _ in range(rounds):
        rows, rhs = [], []
        for i in range(npts):
            # relative residual, linearised with the previous denominator
            s = sqrt(w[i]) / (fs[i] * poly(q, ys[i]))
            rows.append([s * ys[i] ** k for k in range(1, dp + 1)] +
                        [-s * fs[i] * ys[i] ** k for k in range(1, dq + 1)])
            rhs.append(-s * (1 - fs[i]))
        sol, _ = qr_solve(matrix(rows), matrix(rhs))
        p = [mpf(1)] + [sol[k] for k in range(dp)]
        q = [mpf(1)] + [sol[dp + k] for k in range(dq)]
        err = [poly(p, ys[i]) / poly(q, ys[i]) / fs[i] - 1 for i in range(npts)]
        worst = max(abs(e) for e in err)
        if best is None or worst < best[0]:
            best = (worst, p, q)
        total = sum(w[i] * abs(err[i]) for i in range(npts))
        w = [max(w[i] * abs(err[i]) / total, mpf(10) ** -30) for i in range(npts)]
    return best


def main():
    dp, dq, c = 4, 4, mpf(9)
    if len(sys.argv) == 4:
        dp, dq, c = int(sys.argv[1]), int(sys.argv[2]), mpf(sys.argv[3])
    worst, p, q = fit(dp, dq, c)
    print("max relative error %.3e" % float(worst))
    print("P", " ".join("%.9e" % float(v) for v in p))
    print("Q", " ".join("%.9e" % float(v) for v in q))


if __name__ == "__main__":
    main()
