#!/usr/bin/python3
"""The memory a one-line window of ages can reach (issue 57's fingerprint window), by arithmetic.

The window of W periods keeps each entry's age: its period split into k finer ones, an entry lives
W k + 1 of them (the W k that make the window, and the one being filled), so a line holds
(W k + 1) / (W k) entries a window key at a period's end, each of f fingerprint bits and
a = ceil(log2(W k + 1)) bits of age (one value a live generation). Otherwise a line is model.py's:
512 bits, a header, a unary directory of Q + s bits, s remainders of r = f + a bits, a Poisson
load, the keys past s in a spare of the same lines; a lookup matches an entry of its quotient and
fingerprint, whatever its age. Bits a window key, at the window's fullest:

  (W k + 1) / (W k) x (512 / lam + spare share x 512 / (spare load x s) + spill / lam)

`spill` is a byte a main line that the library's window keeps beside its lines (the age of the
line's last key sent to the spare, so that the line's mark comes back once that age is dropped).
Two sets of rules, each the least bits over every f, s, Q and load:

  issue:    model.py's own (at most 5% of keys in the spare, spare lines 90% full, no spill byte);
  library:  what the library plans a window with (src/base/families/fingerprints.c: at most 3% of
            the entries in the spare, spare lines at its two-choice load, the spill byte, and the
            age in the extra bits: f >= 8).

    experiments/fingerprint_model/window.py [WINDOW]    (default 3 periods)
"""
import math
import sys

from model import LINE, HEADER, poisson_spill

RULES = {
    "issue": dict(max_spare=0.05, spill_bits=0, min_f=1, spare_load=lambda s: 0.9),
    "library": dict(max_spare=0.03, spill_bits=8, min_f=8,
                    spare_load=lambda s: 0.77 + (s - 16.0) * (0.14 / 26.0)),
}


def loads():
    """(s, load, lam, spare share, E[min(X, s)]) for every line size and planned load."""
    table = []
    for s in range(8, 64):
        for load in range(50, 100):
            lam = load / 100 * s
            spill, stored = poisson_spill(lam, s)
            table.append((s, load / 100, lam, spill / lam, stored))
    return table


def best(rate, generations, age_bits, rules, table):
    found = None
    for s, load, lam, share, stored in table:
        if share > rules["max_spare"]:
            continue
        for f in range(rules["min_f"], 34):
            q = LINE - HEADER - s * (f + age_bits + 1)
            if q < 4:
                break
            if (stored / q + share) * 2.0 ** -f > rate:
                continue
            entry = (LINE / lam + share * LINE / (rules["spare_load"](s) * s)
                     + rules["spill_bits"] / lam)
            bits = entry * generations / (generations - 1)
            if not found or bits < found[0]:
                found = (bits, f, s, q, load, share)
            break  # a larger f in the same line only costs slots
    return found


def main():
    window = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    table = loads()
    print(f"a window of {window} periods: bits a window key at its fullest, the least over f, s, Q"
          " and load (f, s, Q, load)")
    for rate in (1e-2, 1e-4, 1e-6):
        print(f"rate {rate:g}")
        for k in range(1, 9):
            generations = window * k + 1
            age_bits = math.ceil(math.log2(generations))
            cells = []
            for name, rules in RULES.items():
                bits, f, s, q, load, _ = best(rate, generations, age_bits, rules, table)
                cells.append(f"{name} {bits:5.2f} ({f}, {s}, {q}, {load:.2f})")
            print(f"  k {k}: {generations:2} generations, {age_bits} age bits: " + "   ".join(cells))
        for name, rules in RULES.items():  # finer still: more age bits than the split saves
            bits, k = min((best(rate, window * k + 1, math.ceil(math.log2(window * k + 1)), rules,
                                table)[0], k) for k in range(1, 86))
            print(f"  {name}: the least for any k up to 85 (256 generations): {bits:.2f} at k {k}")


if __name__ == "__main__":
    main()
