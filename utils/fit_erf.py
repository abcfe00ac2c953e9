# How the erf coefficients of runtime/cpu/CpuKernelsEpilogues.inc (erfApprox) were fitted:
# erf(x)/x as P(x^2)/Q(x^2), degrees 6 and 5, on (0, 3.925], by iteratively
# reweighted least squares. A one-off research script, kept for reproducibility:
#   .venv/bin/python utils/fit_erf.py
import math, numpy as np, itertools
from mpmath import mp
mp.dps = 30
C = 3.925
xs = np.concatenate([np.linspace(1e-4, C, 20000), C*(1-np.cos(np.linspace(0, np.pi/2, 4000)))[1:]])
xs = np.sort(xs)
erf = np.array([math.erf(x) for x in xs])
f = erf / xs
t = xs * xs
def fit(p, q, iters=30):
    w = np.ones_like(xs)
    Q = np.ones_like(xs)
    best = None
    for it in range(iters):
        # minimize |x*(P - f*Q)|/Q  ->  weighted LS with weight x/Qprev * w
        A = np.concatenate([np.vander(t, p+1, increasing=True), -(f[:, None] * np.vander(t, q+1, increasing=True)[:, 1:])], axis=1)
        ww = xs / np.abs(Q) * w
        coef, *_ = np.linalg.lstsq(A * ww[:, None], f * ww, rcond=None)
        P = np.vander(t, p+1, increasing=True) @ coef[:p+1]
        Q = 1 + np.vander(t, q+1, increasing=True)[:, 1:] @ coef[p+1:]
        err = xs * (P / Q) - erf
        m = np.max(np.abs(err))
        if best is None or m < best[0]:
            best = (m, coef.copy())
        # Lawson-like reweighting towards minimax
        w = w * (np.abs(err) / m + 1e-3) ** 0.5
        w /= w.max()
    return best
def f32eval(coef, p, q, x):
    x = x.astype(np.float32)
    a = np.minimum(np.abs(x), np.float32(C))
    tt = a * a
    cp = coef[:p+1].astype(np.float32); cq = np.concatenate([[1.0], coef[p+1:]]).astype(np.float32)
    P = np.float32(cp[p]) * np.ones_like(tt)
    for c in cp[p-1::-1]: P = P * tt + c
    Q = np.float32(cq[q]) * np.ones_like(tt)
    for c in cq[q-1::-1]: Q = Q * tt + c
    r = np.minimum(a * P / Q, np.float32(1))
    return np.copysign(r, x)
test = np.linspace(-10, 10, 2000001).astype(np.float32)
ref = np.array([math.erf(float(v)) for v in test[::1]])
for p, q in [(3,3),(4,3),(4,4),(5,3),(5,4),(6,4),(6,5)]:
    m, coef = fit(p, q)
    e32 = np.max(np.abs(f32eval(coef, p, q, test) - ref))
    print(p, q, "double %.3g" % m, "f32 %.3g" % e32, repr(list(coef)))
