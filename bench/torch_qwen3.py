#!/usr/bin/python3
"""PyTorch reference forward of the Qwen3 backbone configs timed by bench/qwen3.

A straightforward Qwen3 decoder (as HF transformers computes it: RMSNorm,
q/k norm, rotate-half RoPE, grouped-query causal attention, SwiGLU MLP) with
random float32 weights, run on the CPU with two threads. Prints one JSON line
with the minimum forward time in milliseconds.

Run with Debian's interpreter (python3-torch + libopenblas0-pthread):
    /usr/bin/python3 bench/torch_qwen3.py --config h256 --tokens 2048

With --export-onnx FILE it instead exports the same model (opset 17, fixed
shapes, input ids int64 [1,S], output [1,S,hidden]) for the ONNX Runtime peer
bench/ort_qwen3.js and writes PyTorch's output for the bench ids to
FILE.ref.f32 (raw little-endian float32). torch 1.13 exports without the
onnx Python package.
"""
import argparse
import json
import os
import sys
import time



def _arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


# OpenBLAS sizes its thread pool when loaded: set it before importing torch.
# With 2 cores, 2 OpenMP threads (torch's own ops) plus 2 spinning OpenBLAS
# threads fight each other; --blas-threads 1 is often faster overall.
_threads = _arg("--threads", "2")
os.environ["OPENBLAS_NUM_THREADS"] = _arg("--blas-threads", _threads)
os.environ["OMP_NUM_THREADS"] = _threads

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

CONFIGS = {  # same table as bench/qwen3/main.go
    "tiny": dict(hidden=16, layers=4, heads=4, kv_heads=2, head_dim=8, inter=48),
    "h256": dict(hidden=256, layers=4, heads=4, kv_heads=2, head_dim=64, inter=768),
    "l1-0.6b": dict(hidden=1024, layers=1, heads=16, kv_heads=8, head_dim=128, inter=3072),
    # The whole Qwen3-0.6B backbone (bench/checkpoint's shape), for GPU runs.
    "0.6b": dict(hidden=1024, layers=28, heads=16, kv_heads=8, head_dim=128, inter=3072),
}
VOCAB = 4096
EPS = 1e-6
THETA = 1e6


def rms_norm(x, w):
    var = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(var + EPS))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Qwen3:
    def __init__(self, c, gen):
        self.c = c
        h, d = c["hidden"], c["head_dim"]
        q, kv = c["heads"] * d, c["kv_heads"] * d

        def rnd(*shape, offset=0.0):
            return torch.randn(*shape, generator=gen) * 0.05 + offset

        self.embed = rnd(VOCAB, h)
        self.layers = []
        for _ in range(c["layers"]):
            self.layers.append(dict(
                ln1=rnd(h, offset=1), ln2=rnd(h, offset=1),
                q=rnd(q, h), k=rnd(kv, h), v=rnd(kv, h), o=rnd(h, q),
                qn=rnd(d, offset=1), kn=rnd(d, offset=1),
                gate=rnd(c["inter"], h), up=rnd(c["inter"], h), down=rnd(h, c["inter"]),
            ))
        self.norm = rnd(h, offset=1)
        inv = 1.0 / (THETA ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        self.inv_freq = inv

    def to(self, device, dtype):
        """Moves the weights (not the rotary frequencies) to device and dtype."""
        self.embed = self.embed.to(device, dtype)
        self.norm = self.norm.to(device, dtype)
        self.layers = [{k: w.to(device, dtype) for k, w in L.items()} for L in self.layers]
        self.inv_freq = self.inv_freq.to(device)
        return self

    def causal(self, s):
        """The strictly-upper (masked) triangle, cached per length."""
        if getattr(self, "_mask_len", None) != s:
            self._mask, self._mask_len = torch.ones(s, s, dtype=torch.bool).triu(1), s
        return self._mask

    def forward(self, ids, attn, onnx_export=False):
        c = self.c
        b, s = ids.shape
        d, hq, hkv = c["head_dim"], c["heads"], c["kv_heads"]
        pos = torch.arange(s, dtype=torch.float32, device=self.inv_freq.device)
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None].to(self.embed.dtype), emb.sin()[None, None].to(self.embed.dtype)
        x = F.embedding(ids, self.embed)
        for L in self.layers:
            h = rms_norm(x, L["ln1"])
            q = F.linear(h, L["q"]).view(b, s, hq, d)
            k = F.linear(h, L["k"]).view(b, s, hkv, d)
            v = F.linear(h, L["v"]).view(b, s, hkv, d)
            q = rms_norm(q, L["qn"]).transpose(1, 2)
            k = rms_norm(k, L["kn"]).transpose(1, 2)
            v = v.transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            rep = hq // hkv
            if onnx_export:
                # torch 1.13's ONNX export mis-shapes repeat_interleave here;
                # expand + reshape gives the same grouped-query heads.
                k = k[:, :, None].expand(b, hkv, rep, s, d).reshape(b, hq, s, d)
                v = v[:, :, None].expand(b, hkv, rep, s, d).reshape(b, hq, s, d)
            else:
                k = k.repeat_interleave(rep, dim=1)
                v = v.repeat_interleave(rep, dim=1)
            if attn == "sdpa":
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            elif attn == "eager":
                scores = (q @ k.transpose(-1, -2)) / (d ** 0.5)
                mask = torch.ones(s, s, dtype=torch.bool).tril()
                scores = scores.masked_fill(~mask, float("-inf"))
                o = torch.softmax(scores, dim=-1) @ v
            else:  # "inplace": fewer full-size temporaries than HF's eager path
                scores = (q * d ** -0.5) @ k.transpose(-1, -2)
                scores.masked_fill_(self.causal(s), float("-inf"))
                o = torch.softmax(scores, dim=-1) @ v
            o = o.transpose(1, 2).reshape(b, s, hq * d)
            x = x + F.linear(o, L["o"])
            h = rms_norm(x, L["ln2"])
            x = x + F.linear(F.silu(F.linear(h, L["gate"])) * F.linear(h, L["up"]), L["down"])
        return rms_norm(x, self.norm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="h256", choices=sorted(CONFIGS))
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (OpenMP)")
    ap.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads (default: --threads)")
    ap.add_argument("--attn", default="eager", choices=["sdpa", "eager", "inplace"],
                    help="eager: explicit masked softmax as HF's eager path (torch 1.13 has no SDPA); "
                         "inplace: scale folded into q, cached mask filled in place; "
                         "sdpa: F.scaled_dot_product_attention(is_causal=True), torch >= 2.0")
    ap.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "tf32"],
                    help="weights and activations; tf32: float32 with TF32 matrix products (CUDA)")
    ap.add_argument("--matmul", default=None, metavar="M,K,N",
                    help="time F.linear(x[M,K], w[N,K]) instead and print GFLOP/s")
    ap.add_argument("--export-onnx", default=None, metavar="FILE",
                    help="export the --config/--tokens model (random weights, fixed shapes, opset 17, "
                         "input ids int64 [1,S], output [1,S,hidden]) to FILE and write this PyTorch "
                         "forward's output for the bench ids to FILE.ref.f32 (raw little-endian float32)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.export_onnx:
        export_onnx(a)
        return
    if a.matmul:
        m, k, n = (int(v) for v in a.matmul.split(","))
        x, w = torch.randn(m, k), torch.randn(n, k)
        F.linear(x, w)
        best = None
        for _ in range(max(a.reps, 5)):
            t = time.perf_counter()
            F.linear(x, w)
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        print(json.dumps(dict(matmul=[m, k, n], gflops=2 * m * k * n / best / 1e9, threads=a.threads,
                              blas_threads=int(os.environ["OPENBLAS_NUM_THREADS"]), blas=blas())))
        return
    m = Qwen3(CONFIGS[a.config], torch.Generator().manual_seed(1))
    torch.backends.cuda.matmul.allow_tf32 = a.dtype == "tf32"
    m.to(a.device, torch.bfloat16 if a.dtype == "bfloat16" else torch.float32)
    ids = (torch.arange(a.tokens) * 7919 % VOCAB)[None].to(a.device)

    def sync():
        if a.device.startswith("cuda"):
            torch.cuda.synchronize()

    best = None
    with torch.inference_mode():
        m.forward(ids, a.attn)  # warm-up
        sync()
        for _ in range(a.reps):
            t = time.perf_counter()
            m.forward(ids, a.attn)
            sync()
            ms = (time.perf_counter() - t) * 1000
            best = ms if best is None else min(best, ms)
    print(json.dumps(dict(config=a.config, tokens=a.tokens, ms=best, threads=a.threads,
                          blas_threads=int(os.environ["OPENBLAS_NUM_THREADS"]), attn=a.attn,
                          device=a.device, dtype=a.dtype, torch=torch.__version__, blas=blas())))


class _Exported(torch.nn.Module):
    """Wraps Qwen3 for torch.onnx.export (the weights become initializers)."""

    def __init__(self, m, attn):
        super().__init__()
        self.m, self.attn = m, attn

    def forward(self, ids):
        return self.m.forward(ids, self.attn, onnx_export=True)


def export_onnx(a):
    """Writes the ONNX model to a.export_onnx and the reference output next to it."""
    if a.attn == "sdpa":
        sys.exit("--export-onnx: use --attn eager or inplace (torch 1.13 has no SDPA)")
    m = Qwen3(CONFIGS[a.config], torch.Generator().manual_seed(1))
    ids = (torch.arange(a.tokens) * 7919 % VOCAB)[None]
    with torch.no_grad():
        ref = m.forward(ids, a.attn)  # the timed PyTorch path (repeat_interleave)
        alt = m.forward(ids, a.attn, onnx_export=True)
        if not torch.equal(ref, alt):
            sys.exit("--export-onnx: the expand path differs from repeat_interleave")
        tmp = a.export_onnx + ".tmp"
        torch.onnx.export(_Exported(m, a.attn), (ids,), tmp, opset_version=17,
                          input_names=["ids"], output_names=["out"], do_constant_folding=True)
    ref.contiguous().numpy().astype("<f4").tofile(a.export_onnx + ".ref.f32")
    os.replace(tmp, a.export_onnx)  # the model last: its presence means both files are complete
    print(json.dumps(dict(config=a.config, tokens=a.tokens, onnx=a.export_onnx, ref=a.export_onnx + ".ref.f32",
                          shape=list(ref.shape), opset=17, attn=a.attn, torch=torch.__version__)))


def blas():
    """Names the BLAS library mapped into this process (Debian's torch uses libblas.so.3)."""
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "unknown"
    for name in ("openblas", "mkl", "blis", "libblas"):
        if name in maps:
            return "reference" if name == "libblas" else name
    return "unknown"


if __name__ == "__main__":
    main()
