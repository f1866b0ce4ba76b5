"""Probes how HF tokenizers' BertNormalizer and BertPreTokenizer classify
every code point, for gen_tables.go, which turns the answers into tables.go:

    python3 testdata/unicode_probe.py /tmp/hf_unicode.json
    go run gen_tables.go /tmp/hf_unicode.json

HF's Rust crates are on other Unicode versions than Go's tables, so the
classes are taken from HF itself rather than from a Unicode version.
"""
import json
import sys

import tokenizers
from tokenizers import normalizers, pre_tokenizers


def bert(clean=False, strip=False, lower=False):
    return normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=False, strip_accents=strip, lowercase=lower)


clean, strip, lower = bert(clean=True), bert(strip=True), bert(lower=True)
pre = pre_tokenizers.BertPreTokenizer()

out = {"tokenizers": tokenizers.__version__, "removed": [], "whitespace": [], "punct": [], "mn": [], "strip": {}, "lower": {}}
for cp in range(0x110000):
    if 0xD800 <= cp <= 0xDFFF:
        continue
    c = chr(cp)
    cleaned = clean.normalize_str("x" + c + "x")
    if cleaned == "xx":
        out["removed"].append(cp)
    elif cleaned == "x x":
        out["whitespace"].append(cp)
    words = [w for w, _ in pre.pre_tokenize_str("x" + c + "x")]
    if words == ["x", c, "x"]:
        out["punct"].append(cp)
    s = strip.normalize_str(c)
    if s == "":
        out["mn"].append(cp)
    if s != c:
        out["strip"][cp] = s
    lo = lower.normalize_str(c)
    if lo != c:
        out["lower"][cp] = lo

with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=True)
