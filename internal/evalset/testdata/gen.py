#!/usr/bin/env python3
"""Regenerates the evalset package's references from CPython and
shared/evalsets/baselines.py:

  python3 gen.py /work/shared/evalsets

random_ref.json: repr of ratios and random.sample draws (the random baseline
must draw exactly what baselines.py draws).
dev_metrics.json: baselines.py's evaluate() on every dev file and overall,
at full precision.
"""
import hashlib
import json
import os
import random
import sys

root = sys.argv[1]
sys.path.insert(0, root)
import baselines as bl  # noqa: E402

out = {"repr": [], "sample": []}
for f in [0.1, 0.2, 0.3, 0.25, 1.0, 0.0, 1e-05, 0.0001, 0.00012, 9.99e-05,
          1e16, 123456.789, 2.5e-7, 0.30000000000000004]:
    out["repr"].append([f, repr(f)])
for cid, r, n in [("a/b@0123456789:x.py", 0.1, 40), ("a/b@0123456789:x.py", 0.2, 40),
                  ("pallets/flask@abc:flask/app.py", 0.3, 600), ("x", 0.5, 10),
                  ("y", 0.05, 3000), ("z", 1.0, 7), ("w", 0.2, 113), ("v", 0.9, 50),
                  ("u", 0.02, 100), ("t", 0.1, 250)]:
    k = bl.budget(r, n)
    seed = int(hashlib.sha1(("%s|%s" % (cid, r)).encode()).hexdigest()[:12], 16)
    want = random.Random(seed).sample(range(1, n + 1), k)
    assert set(want) == bl.keep_random({"id": cid}, [""] * n, r)
    out["sample"].append({"id": cid, "r": r, "n": n, "k": k, "want": want})
with open("random_ref.json", "w") as fh:
    json.dump(out, fh, indent=0)

ratios = [0.1, 0.2, 0.3]
groups = bl.load([os.path.join(root, "dev")])
res = {}
allc = []
for f, cases in groups:
    name = os.path.basename(f)[:-len(".jsonl")]
    res[name] = {"%s@%s" % k: v for k, v in bl.evaluate(cases, ratios, None).items()}
    allc.extend(cases)
res["overall"] = {"%s@%s" % k: v for k, v in bl.evaluate(allc, ratios, None).items()}
with open("dev_metrics.json", "w") as fh:
    json.dump(res, fh, indent=1, sort_keys=True)
