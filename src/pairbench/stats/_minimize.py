"""Brent's bounded minimiser of one variable, as ``scipy.optimize.minimize_scalar(method="bounded")``
runs it.

Ported rather than imported: the confidence sequence tunes its mixture with it
(``stats.sequential``), which the stopping rule needs before the first sample,
and importing ``scipy.optimize`` costs about 0.35 s of CPU there. The steps
are scipy's ``_minimize_scalar_bounded`` (scipy/optimize/_optimize.py, BSD-3-Clause,
Copyright (c) 2001-2002 Enthought, Inc. and 2003-2024 SciPy Developers), the
golden-section and parabolic steps of Brent (*Algorithms for Minimization
without Derivatives*, 1973, ch. 5). ``tests/stats/test_sequential_tuning.py``
compares it with scipy's at test time.
"""

from __future__ import annotations

import math
from collections.abc import Callable

_SQRT_EPS = math.sqrt(2.2e-16)
_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))


def fminbound(func: Callable[[float], float], lower: float, upper: float, *, xatol: float = 1e-5,
              maxiter: int = 500) -> float:
    """The x in [``lower``, ``upper``] at which ``func`` is smallest, to within ``xatol``
    (``minimize_scalar(func, bounds=(lower, upper), method="bounded", options={"xatol": xatol}).x``)."""
    a, b = lower, upper
    fulc = nfc = xf = a + _GOLDEN * (b - a)
    rat = e = 0.0
    fx = func(xf)
    ffulc = fnfc = fx
    calls = 1
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > tol2 - 0.5 * (b - a):
        golden = True
        if abs(e) > tol1:  # try a parabola through the three best points
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r, e = e, rat
            if abs(p) < abs(0.5 * q * r) and q * (a - xf) < p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * _sign_or_one(xm - xf)
            else:
                golden = True
        if golden:
            e = a - xf if xf >= xm else b - xf
            rat = _GOLDEN * e
        x = xf + _sign_or_one(rat) * max(abs(rat), tol1)
        fu = func(x)
        calls += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc in (xf, nfc):
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if calls >= maxiter:
            break
    return xf


def _sign_or_one(v: float) -> float:
    """sign(v), with 1 for 0 (scipy's ``np.sign(v) + (v == 0)``)."""
    return 1.0 if v >= 0.0 else -1.0
