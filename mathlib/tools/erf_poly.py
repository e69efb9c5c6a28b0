#!/usr/bin/env python3
"""kErfPoly (mathlib/f32_vec.h): the Chebyshev interpolant of degree 16 of
G(t) = erf(sqrt(t))/sqrt(t) on [0, 4] in the monomial basis of t, each
coefficient rounded to binary64; prints them as hex floats with the largest
relative error of p against G on a grid (an estimate: cr32_test proves the
bound). With `big`, kErfBigPoly: the interpolant of erf(3 + u) on u in
[-1, 1] (|x| in [2, 4]) and its largest absolute error on a grid.
Needs mpmath (in the torch environment: scripts/setup_torch.sh).
    /opt/stax-torch-venv/bin/python mathlib/tools/erf_poly.py [big] [DEGREE]
"""
import sys

import mpmath as mp

mp.mp.dps = 50


def G(t):
    if t == 0:
        return 2 / mp.sqrt(mp.pi)
    a = mp.sqrt(t)
    return mp.erf(a) / a


def fit(d, lo=0, hi=4, f=G):
    n = d + 1
    ts = [mp.mpf(hi + lo) / 2 + mp.mpf(hi - lo) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    a = mp.matrix([[t**j for j in range(n)] for t in ts])
    c = mp.lu_solve(a, mp.matrix([f(t) for t in ts]))
    return [float(c[j]) for j in range(n)]


def main():
    args = sys.argv[1:]
    big = bool(args) and args[0] == "big"
    if big:
        args = args[1:]
    d = int(args[0]) if args else (15 if big else 16)
    if big:
        def f(u):
            return mp.erf(3 + u)
        c = fit(d, -1, 1, f)
        grid = (mp.mpf(2) * i / 4000 - 1 for i in range(4001))
        err = max(abs(sum(mp.mpf(x) * u**j for j, x in enumerate(c)) - f(u)) for u in grid)
        what = "max |p - erf(3 + u)|"
    else:
        c = fit(d)
        err = max(abs(sum(mp.mpf(x) * t**j for j, x in enumerate(c)) - G(t)) / G(t)
                  for t in (mp.mpf(4) * i / 4000 for i in range(4001)))
        what = "max |p - G| / G"
    print(",\n".join(x.hex() for x in c))
    print(f"# grid estimate of {what}: 2^{float(mp.log(err, 2)):.2f}")


if __name__ == "__main__":
    main()
