#!/usr/bin/python3
"""The memory a one-line fingerprint filter can reach (issue 56's family), by arithmetic.

A key's bucket is one 64-byte line (512 bits), chosen by its hash's high bits; the line holds s
remainders of r bits, kept in order of the key's mini-bucket (one of Q, from other hash bits),
with a unary directory of Q + s bits (Q ones, a zero per stored key: the quotient of each
remainder in unary, Elias-Fano's form), and H bits of header (where the line overflowed). A line
has room for s keys; its load is Poisson(lam) (n keys over n / lam lines); the keys past s go to a
spare (prefix-filter style: the line keeps its smallest quotients and records where it stopped,
so only the lookups above that point read the spare). So:

  keys in the spare      E[(X - s)+] / lam                 (X ~ Poisson(lam))
  false-positive rate    E[min(X, s)] / Q * 2^-r  +  spare share * 2^-r   (one key a mini-bucket
                         in the spare, at most)
  bits a key             512 / lam  +  spare share * (bits a spare key costs)

"At least 95% of operations touch one line" bounds the spare's share at 5%. The spare is lines of
the same form at a load of its own (spare_load). For each rate the smallest bits a key over every
r, s, Q and load that keep both promises.

    experiments/fingerprint_model/model.py [SPARE_LOAD ...]    (default 0.5 0.9)
"""
import math
import sys

LINE, HEADER, MAX_SPARE = 512, 8, 0.05


def poisson_spill(lam, s):
    """E[(X - s)+] and E[min(X, s)] for X ~ Poisson(lam)."""
    p, stored = math.exp(-lam), 0.0
    for k in range(0, int(lam * 4 + 60)):
        if k:
            p *= lam / k
        stored += min(k, s) * p
    return lam - stored, stored


def best(rate, spare_load):
    found = None
    for r in range(6, 34):
        for s in range(8, 64):
            q = LINE - HEADER - s * (r + 1)
            if q < 4:
                continue
            for load in range(60, 100):
                lam = load / 100 * s
                spill, stored = poisson_spill(lam, s)
                share = spill / lam
                fpp = (stored / q + share) * 2.0 ** -r
                if share > MAX_SPARE or fpp > rate:
                    continue
                bits = LINE / lam + share * LINE / (spare_load * s)
                if not found or bits < found[0]:
                    found = (bits, r, s, q, load / 100, share, fpp)
    return found


def main():
    loads = [float(a) for a in sys.argv[1:]] or [0.5, 0.9]
    print("rate    limit  " + "  ".join(f"spare at {l:.0%}: bits (r, s, Q, load, spare)" for l in loads))
    for rate in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9):
        cells = []
        for l in loads:
            bits, r, s, q, load, share, fpp = best(rate, l)
            cells.append(f"{bits:5.1f} ({r}, {s}, {q}, {load:.2f}, {share:.1%})")
        print(f"{rate:<7g} {math.log2(1 / rate):5.1f}  " + "   ".join(cells))


if __name__ == "__main__":
    main()
