"""Writes the bert package's test data: a tiny random BERT (tiny-bert/) with
PyTorch goldens for it (tiny_golden.json), and PyTorch goldens for
all-MiniLM-L6-v2 (minilm_golden.json; the model itself is not committed).

Two steps, because the tokenizer and torch live in different Pythons here:

    # 1. HF tokenizers: the tiny tokenizer files and every golden's ids
    python3 testdata/gen_golden.py ids /path/to/all-MiniLM-L6-v2
    # 2. torch: the tiny model's weights and the forward passes
    /usr/bin/python3 testdata/gen_golden.py model /path/to/all-MiniLM-L6-v2

(run from internal/bert; step 1 leaves /tmp/bert_golden_ids.json for step
2). The forward pass below is Hugging Face's BertModel (transformers 4.x,
eager attention) written out in torch, with sentence-transformers' mean
pooling and normalisation after it. Where transformers is importable, step 2
also checks it against transformers.BertModel.
"""
import json
import math
import os
import struct
import sys

IDS = "/tmp/bert_golden_ids.json"
TINY = "testdata/tiny-bert"

# A small uncased vocabulary: specials, punctuation, letters and their
# continuations, a few words and suffixes.
VOCAB = (
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    + list("0123456789abcdefghijklmnopqrstuvwxyz")
    + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    + "the a model go code func return error hello world test data and of to is in it for main rune string byte".split()
    + ["##s", "##ing", "##ed", "##er", "##ly", "##tion"]
)

TINY_CONFIG = {
    "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 32,
    "initializer_range": 0.02,
    "intermediate_size": 64,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 64,
    "model_type": "bert",
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "type_vocab_size": 2,
    "vocab_size": len(VOCAB),
}
TINY_MAX_SEQ = 48

TINY_TEXTS = [
    "hello world",
    "The model returns an error.",
    "func main() { return go_code(data) }",
    "",
    "HELLO, Wörld!! testing tested tester",
    "unknownwordzzz 42 + 7 = 49; a[i] != b[j]",
    "code " * 30,  # truncated to 48 tokens
    "x",
]

MINILM_TEXTS = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "How are retries scheduled in the HTTP client?",
    "func (c *Client) retry(ctx context.Context, attempt int) time.Duration {",
    "",
    "Ünïcödé, émoji 😀 and 中文 mixed in one line",
]


def step_ids(minilm):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    os.makedirs(TINY, exist_ok=True)
    with open(os.path.join(TINY, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")
    vocab = {t: i for i, t in enumerate(VOCAB)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.save(os.path.join(TINY, "tokenizer.json"))
    tok.enable_truncation(TINY_MAX_SEQ)
    out = {"tiny": [tok.encode(t).ids for t in TINY_TEXTS]}
    if minilm:
        mt = Tokenizer.from_file(os.path.join(minilm, "tokenizer.json"))
        mt.no_padding()
        mt.enable_truncation(256)
        out["minilm"] = [mt.encode(t).ids for t in MINILM_TEXTS]
    with open(IDS, "w") as f:
        json.dump(out, f)


# --- safetensors, by hand (the torch Python here has no safetensors) ---


def save_safetensors(path, tensors):
    import numpy as np

    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name].detach().numpy().astype("<f4"))
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_safetensors(path):
    import numpy as np
    import torch

    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        raw = data[8 + n + a : 8 + n + b]
        if e["dtype"] == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif e["dtype"] == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype("f4")
        elif e["dtype"] == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype("u4") << 16).view("f4")
        else:
            continue  # position_ids and other integer buffers
        out[name] = torch.from_numpy(arr.copy().reshape(e["shape"]))
    return out


# --- Hugging Face BertModel, written out ---


def bert_forward(sd, cfg, ids, mask):
    import torch
    import torch.nn.functional as F

    p = "bert." if "bert.embeddings.word_embeddings.weight" in sd else ""
    w = lambda n: sd[p + n]
    B, S = ids.shape
    H, nh = cfg["hidden_size"], cfg["num_attention_heads"]
    d, eps = H // nh, cfg["layer_norm_eps"]
    tt = torch.zeros_like(ids)
    x = F.embedding(ids, w("embeddings.word_embeddings.weight")) + F.embedding(tt, w("embeddings.token_type_embeddings.weight"))
    x = x + w("embeddings.position_embeddings.weight")[:S][None]
    x = F.layer_norm(x, (H,), w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"), eps)
    ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
    for i in range(cfg["num_hidden_layers"]):
        q_ = "encoder.layer.%d." % i
        lin = lambda t, n: F.linear(t, w(q_ + n + ".weight"), w(q_ + n + ".bias"))
        heads = lambda t: t.view(B, S, nh, d).permute(0, 2, 1, 3)
        q = heads(lin(x, "attention.self.query"))
        k = heads(lin(x, "attention.self.key"))
        v = heads(lin(x, "attention.self.value"))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + ext
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(B, S, H)
        a = lin(ctx, "attention.output.dense")
        x = F.layer_norm(a + x, (H,), w(q_ + "attention.output.LayerNorm.weight"), w(q_ + "attention.output.LayerNorm.bias"), eps)
        inter = F.gelu(lin(x, "intermediate.dense"))
        o = lin(inter, "output.dense")
        x = F.layer_norm(o + x, (H,), w(q_ + "output.LayerNorm.weight"), w(q_ + "output.LayerNorm.bias"), eps)
    return x


def pool(x, mask, mode):
    import torch
    import torch.nn.functional as F

    if mode == "cls":
        v = x[:, 0]
    else:
        m = mask[:, :, None].to(x.dtype)
        v = (x * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
    return F.normalize(v, p=2, dim=1)


def padded(seqs):
    import torch

    S = max(len(s) for s in seqs)
    ids = torch.tensor([s + [0] * (S - len(s)) for s in seqs])
    mask = torch.tensor([[1] * len(s) + [0] * (S - len(s)) for s in seqs])
    return ids, mask


def check_transformers(sd, cfg, ids, mask, x):
    try:
        from transformers import BertConfig, BertModel
    except ImportError:
        print("transformers is not importable: the written-out forward is not cross-checked")
        return
    import torch

    model = BertModel(BertConfig(**cfg), add_pooling_layer=False).eval()
    p = "bert." if "bert.embeddings.word_embeddings.weight" in sd else ""
    own = {k[len(p) :]: v for k, v in sd.items() if k.startswith(p)}
    missing, _ = model.load_state_dict(own, strict=False)
    assert all("position_ids" in k for k in missing), missing
    with torch.no_grad():
        ref = model(input_ids=ids, attention_mask=mask).last_hidden_state
    err = ((ref - x).abs() * mask[:, :, None]).max().item()
    print("transformers.BertModel vs written-out forward: max abs diff %.3g" % err)
    assert err < 1e-5


def rows(x, seqs):
    return [[round(float(v), 7) for v in x[i, : len(s)].reshape(-1).tolist()] for i, s in enumerate(seqs)]


def vec(v):
    return [[round(float(a), 7) for a in r] for r in v.tolist()]


def step_model(minilm):
    import torch

    torch.manual_seed(45)
    with open(IDS) as f:
        ids = json.load(f)
    cfg = dict(TINY_CONFIG)
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    rnd = lambda *s, std=0.2: torch.randn(*s) * std
    sd = {
        "embeddings.word_embeddings.weight": rnd(V, H, std=1.0),
        "embeddings.position_embeddings.weight": rnd(cfg["max_position_embeddings"], H, std=0.5),
        "embeddings.token_type_embeddings.weight": rnd(cfg["type_vocab_size"], H, std=0.5),
        "embeddings.LayerNorm.weight": 1 + rnd(H, std=0.1),
        "embeddings.LayerNorm.bias": rnd(H, std=0.1),
    }
    for i in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % i
        for n in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]:
            sd[p + n + ".weight"] = rnd(H, H, std=0.3)
            sd[p + n + ".bias"] = rnd(H, std=0.1)
        sd[p + "intermediate.dense.weight"] = rnd(I, H, std=0.3)
        sd[p + "intermediate.dense.bias"] = rnd(I, std=0.1)
        sd[p + "output.dense.weight"] = rnd(H, I, std=0.2)
        sd[p + "output.dense.bias"] = rnd(H, std=0.1)
        for n in ["attention.output.LayerNorm", "output.LayerNorm"]:
            sd[p + n + ".weight"] = 1 + rnd(H, std=0.1)
            sd[p + n + ".bias"] = rnd(H, std=0.1)
    save_safetensors(os.path.join(TINY, "model.safetensors"), sd)
    files = {
        "config.json": cfg,
        "tokenizer_config.json": {"do_lower_case": True, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                                  "cls_token": "[CLS]", "mask_token": "[MASK]", "tokenize_chinese_chars": True,
                                  "strip_accents": None, "tokenizer_class": "BertTokenizer", "model_max_length": 64},
        "sentence_bert_config.json": {"max_seq_length": TINY_MAX_SEQ, "do_lower_case": False},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
        "1_Pooling/config.json": {"word_embedding_dimension": H, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
                                  "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False},
    }
    for name, v in files.items():
        path = os.path.join(TINY, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(v, f, indent=2)
            f.write("\n")

    seqs = ids["tiny"]
    t, m = padded(seqs)
    with torch.no_grad():
        x = bert_forward(sd, cfg, t, m)
        check_transformers(sd, cfg, t, m, x)
        golden = {"texts": TINY_TEXTS, "ids": seqs, "hidden": rows(x, seqs), "mean": vec(pool(x, m, "mean")), "cls": vec(pool(x, m, "cls"))}
    with open("testdata/tiny_golden.json", "w") as f:
        json.dump(golden, f)
        f.write("\n")

    if minilm:
        with open(os.path.join(minilm, "config.json")) as f:
            mcfg = json.load(f)
        msd = load_safetensors(os.path.join(minilm, "model.safetensors"))
        seqs = ids["minilm"]
        t, m = padded(seqs)
        with torch.no_grad():
            x = bert_forward(msd, mcfg, t, m)
            check_transformers(msd, mcfg, t, m, x)
            golden = {"texts": MINILM_TEXTS, "ids": seqs,
                      # the first 8 values of every token's last hidden state
                      "hidden8": [[round(float(v), 7) for v in x[i, : len(s), :8].reshape(-1).tolist()] for i, s in enumerate(seqs)],
                      "mean": vec(pool(x, m, "mean"))}
        with open("testdata/minilm_golden.json", "w") as f:
            json.dump(golden, f)
            f.write("\n")


if __name__ == "__main__":
    step, minilm = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
    {"ids": step_ids, "model": step_model}[step](minilm)
