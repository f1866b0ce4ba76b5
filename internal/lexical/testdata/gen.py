#!/usr/bin/env python3
"""Regenerates the lexical package's expected outputs from the Python
reference (shared/evalsets/baselines.py):

  python3 gen.py /work/shared/evalsets

bm25_cases.json: the first case of every dev file, with its raw BM25 scores
and top-k selections; tokens.json: ident_tokens / query_tokens of tricky
strings; bm25_dev_r02.json: sha1 of the r=0.2 selection of every dev case.
"""
import hashlib
import json
import os
import sys

root = sys.argv[1]
sys.path.insert(0, root)
import baselines as bl  # noqa: E402

groups = bl.load([os.path.join(root, "dev")])
cases = []
digests = {}
for f, cs in groups:
    for i, c in enumerate(cs):
        lines = bl.split_lines(c["text"])
        sel = sorted(bl.keep_bm25(c, lines, 0.2))
        digests[c["id"]] = hashlib.sha1(",".join(map(str, sel)).encode()).hexdigest()
        if i != 0:
            continue
        sc = bl.bm25_scores(c["query"], lines)
        order = sorted(range(len(lines)), key=lambda j: (-sc[j], j))
        cases.append({
            "id": c["id"], "query": c["query"], "text": c["text"],
            "scores": sc,
            "topk": {str(r): order[:bl.budget(r, len(lines))] for r in (0.1, 0.2, 0.3)},
        })
with open("bm25_cases.json", "w") as fh:
    json.dump(cases, fh, indent=0)
with open("bm25_dev_r02.json", "w") as fh:
    json.dump(digests, fh, indent=0, sort_keys=True)

strings = [
    "", "a", "HTTPServer", "parseHTTPRequest_v2", "getX", "XMLHttpRequest2Go",
    "ABC", "ABCd", "aB", "AbCD", "snake_case_name", "x1y22z333", "IOError",
    "camelCase42Foo", "__init__", "ÄpfelÖl café naïve", "foo\x00bar", "\ufeffBOM",
    "URLs URLsForMe HTMLParser's", "A1B2c3", "fix the retry logic in DoRequest",
    "Add support for the --no-color flag; it's the same as before",
    "I/O: a b c dd ee e2e", "e.g. use json.Marshal() for the output",
    "the THE The aNd", "valueOf(x) IS NOT null",
]
tok = [{"s": s, "ident": bl.ident_tokens(s), "query": bl.query_tokens(s)} for s in strings]
with open("tokens.json", "w") as fh:
    json.dump(tok, fh, indent=0, ensure_ascii=False)
