#!/usr/bin/env python3
"""kExpPoly4 (mathlib/f32_vec.h): the Chebyshev interpolant of degree 4 of
exp(r) on [-R, R], R = 0.021661 (the reduced argument of exp_v16_in_range),
in the monomial basis, each coefficient rounded to binary64; prints them as
hex floats with the largest relative error of p against exp on a grid (an
estimate: cr32_test proves the bound, exp_poly_bound). Needs mpmath.
    python3 mathlib/tools/exp_poly.py [DEGREE]
"""
import sys

import mpmath as mp

mp.mp.dps = 50
R = mp.mpf("0.021661")


def fit(d):
    n = d + 1
    ts = [R * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    a = mp.matrix([[t**j for j in range(n)] for t in ts])
    c = mp.lu_solve(a, mp.matrix([mp.exp(t) for t in ts]))
    return [float(c[j]) for j in range(n)]


def main():
    d = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    c = fit(d)
    grid = (R * (2 * mp.mpf(i) / 4000 - 1) for i in range(4001))
    err = max(abs(sum(mp.mpf(x) * t**j for j, x in enumerate(c)) - mp.exp(t)) / mp.exp(t) for t in grid)
    print(",\n".join(x.hex() for x in c))
    print(f"# grid estimate of max |p - exp| / exp: 2^{float(mp.log(err, 2)):.2f}")


if __name__ == "__main__":
    main()
