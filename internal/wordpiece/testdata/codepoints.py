"""Writes what HF tokenizers' BertNormalizer + BertPreTokenizer make of every
code point, for TestAllCodePoints (opt-in: WORDPIECE_CODEPOINTS=<the file>).

    python3 testdata/codepoints.py /tmp/codepoints.jsonl

Each line is [code point, uncased words, cased words] for the text
"x" + chr(cp) + "x", where the words are the pre-tokenizer's strings. The
file is about 40 MB, so it is not committed.
"""
import json
import sys

from tokenizers import normalizers, pre_tokenizers

uncased = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
cased = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False)
pre = pre_tokenizers.BertPreTokenizer()


def words(norm, text):
    return [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(text))]


with open(sys.argv[1], "w", encoding="utf-8") as out:
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # not a character (a Go string cannot hold one either)
        text = "x" + chr(cp) + "x"
        out.write(json.dumps([cp, words(uncased, text), words(cased, text)]) + "\n")
