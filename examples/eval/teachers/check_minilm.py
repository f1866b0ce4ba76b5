"""Checks the MiniLM forwards against each other (1e-4), and the tokenizer
against the model card's example.

    python3 examples/eval/teachers/check_minilm.py in /tmp/t45     # writes minilm_ref_in.npz
    /usr/bin/python3 examples/eval/teachers/export_onnx.py /tmp/t45/minilm.onnx
    python3 examples/eval/teachers/check_minilm.py check /tmp/t45  # numpy vs torch vs onnxruntime
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import minilm  # noqa: E402

SENTENCES = [
    "This is an example sentence",
    "Each sentence is converted",
    "func parseConfig(path string) (*Config, error) {",
    "how are retries scheduled after a failed request?",
    "    return self._cache.get(key, default)",
    "}",
]


def batch():
    tok = minilm.tokenizer(128)
    encs = [e.ids for e in tok.encode_batch(SENTENCES)]
    T = max(map(len, encs))
    ids = np.zeros((len(encs), T), np.int64)
    mask = np.zeros((len(encs), T), np.int64)
    for i, e in enumerate(encs):
        ids[i, :len(e)] = e
        mask[i, :len(e)] = 1
    return tok, ids, mask


def main():
    mode, d = sys.argv[1], sys.argv[2]
    tok, ids, mask = batch()
    if mode == "in":
        np.savez(os.path.join(d, "minilm_ref_in.npz"), ids=ids, mask=mask)
        print(tok.encode(SENTENCES[2]).tokens)
        return
    # The model card's tokenization of its example: lowercase wordpieces.
    assert tok.encode(SENTENCES[0]).tokens == ["[CLS]", "this", "is", "an", "example", "sentence", "[SEP]"], tok.encode(SENTENCES[0]).tokens
    ref = np.load(os.path.join(d, "minilm_ref_torch.npy"))
    t0 = time.time()
    hn = minilm.NumpyMiniLM().hidden(ids, mask)
    t1 = time.time()
    ho = minilm.OrtMiniLM(os.path.join(d, "minilm.onnx")).hidden(ids, mask)
    m = mask[..., None].astype(bool)
    for name, h in [("numpy", hn), ("onnxruntime", ho)]:
        err = np.abs(np.where(m, h - ref, 0)).max()
        print(f"{name} vs torch: max abs diff of hidden states {err:.2e}")
        assert err < 1e-4, name
    pn, po, pt = minilm.pool(hn, mask), minilm.pool(ho, mask), minilm.pool(ref, mask)
    print(f"pooled: numpy {np.abs(pn - pt).max():.2e}, onnxruntime {np.abs(po - pt).max():.2e}")
    assert np.abs(pn - pt).max() < 1e-4 and np.abs(po - pt).max() < 1e-4
    print("cosines (query 3 vs each):", np.round(pt @ pt[3], 3))
    print(f"numpy forward {t1 - t0:.2f}s; ok")


if __name__ == "__main__":
    main()
