#!/usr/bin/env python3
"""MRR of MiniLM on #29's held-out NL <-> code pairs (examples/pairs output),
beside a tf-idf cosine computed here on the same sample.

    go run ./examples/pairs -out /tmp/t45/pairs_local.jsonl.gz
    python3 examples/eval/teachers/pairs_mrr.py -pairs /tmp/t45/pairs_local.jsonl.gz

The protocol follows the trainer's evalRank: each val pair ranks its unit
among the first 200 units of the same kind (def or block) of its file,
ties counted against it; MRR and recall@1, by pair kind (doc, inline).
The sample is every val file (or the first -files) (records sorted by source and
path, as the miner writes them) holding a pair whose unit has at least one
rival. MiniLM encodes comments as they are (truncated at 128 wordpieces)
and units at 256 wordpieces, mean pooled. The tf-idf cosine here splits
identifiers into lowercase pieces (idf over the sample's units); it is not
the Go trainer's WordStream, so compare MiniLM with it, not with the
numbers of docs/linemodel.md.
"""

import argparse
import gzip
import json
import math
import os
import re
import sys
import time
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minilm  # noqa: E402
from score import SumCache  # noqa: E402

MAX_CANDS = 200


def words(s):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", s)
    return [w for w in re.findall(r"[A-Za-z]+|\d+", s.lower()) if len(w) > 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-pairs", required=True)
    ap.add_argument("-files", type=int, default=0, help="at most this many val files (0: all)")
    ap.add_argument("-onnx", default="/tmp/t45/minilm.onnx")
    ap.add_argument("-cache", default="/tmp/t45/cache")
    a = ap.parse_args()

    files = []
    with gzip.open(a.pairs, "rt") as f:
        for line in f:
            r = json.loads(line)
            if r.get("split") != "val":
                continue
            kinds = [u["kind"] for u in r["units"]]
            cands = {}
            for i, k in enumerate(kinds):
                if len(cands.setdefault(k, [])) < MAX_CANDS:
                    cands[k].append(i)
            pairs = [p for p in r["pairs"] if p["unit"] in cands.get(kinds[p["unit"]], []) and len(cands[kinds[p["unit"]]]) >= 2]
            if not pairs:
                continue
            files.append((r, cands, pairs))
            if a.files and len(files) >= a.files:
                break
    npairs = sum(len(p) for _, _, p in files)
    print(f"pairs_mrr: {len(files)} val files, {npairs} pairs", file=sys.stderr)

    model = minilm.OrtMiniLM(a.onnx)
    toks = {n: minilm.tokenizer(n) for n in (128, 256)}
    os.makedirs(a.cache, exist_ok=True)
    caches = {"nl": SumCache(os.path.join(a.cache, "minilm_pairs_nl.npz")),
              "code": SumCache(os.path.join(a.cache, "minilm_pairs_code.npz"))}

    def vecs(name, texts, max_len):
        c = caches[name]
        todo = c.missing(texts)
        if todo:
            t0 = time.time()
            encs = [e.ids for e in toks[max_len].encode_batch(todo)]
            s = np.zeros((len(encs), 384), np.float32)
            n = np.zeros(len(encs), np.float32)
            for idx, ids, mask in minilm.batches(encs, 8192):
                h = model.hidden(ids, mask)
                s[idx] = (h * mask[..., None]).sum(1)
                n[idx] = mask.sum(1)
            c.add(todo, s, n)
            c.save()
            wp = sum(map(len, encs))
            print(f"pairs_mrr: {name}: {len(todo)} texts, {wp} wordpieces, {time.time() - t0:.0f}s", file=sys.stderr)
        s, n = c.get(texts)
        v = s / np.maximum(n, 1e-9)[:, None]
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    code_texts = [r["units"][i]["code"] for r, cands, _ in files for k in cands for i in cands[k]]
    nl_texts = [p["nl"] for _, _, ps in files for p in ps]
    vecs("code", code_texts, 256)
    vecs("nl", nl_texts, 128)

    df = Counter()
    for t in code_texts:
        df.update(set(words(t)))
    N = len(code_texts)

    def tfidf(t):
        tf = Counter(words(t))
        v = {w: (1 + math.log(c)) * math.log((N + 1) / (df.get(w, 0) + 1)) for w, c in tf.items()}
        n = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {w: x / n for w, x in v.items()}

    res = {m: {} for m in ("minilm", "tfidf")}
    for r, cands, ps in files:
        for p in ps:
            k = r["units"][p["unit"]]["kind"]
            cs = cands[k]
            j0 = cs.index(p["unit"])
            q = vecs("nl", [p["nl"]], 128)[0]
            U = vecs("code", [r["units"][i]["code"] for i in cs], 256)
            sc = {"minilm": U @ q}
            qt = tfidf(p["nl"])
            sc["tfidf"] = np.array([sum(qt.get(w, 0) * x for w, x in tfidf(r["units"][i]["code"]).items()) for i in cs])
            for m, s in sc.items():
                rank = 1 + int(np.sum(np.delete(s, j0) >= s[j0]))
                for key in ("all", p["kind"]):
                    st = res[m].setdefault(key, [0, 0.0, 0.0])
                    st[0] += 1
                    st[1] += 1 / rank
                    st[2] += rank == 1
    for m, d in res.items():
        print(m, " ".join(f"{k}: MRR {v[1] / v[0]:.3f} R@1 {v[2] / v[0]:.3f} ({v[0]} pairs)" for k, v in sorted(d.items())))


if __name__ == "__main__":
    main()
