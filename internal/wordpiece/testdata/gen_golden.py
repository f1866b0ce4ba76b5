"""Writes golden.json: what HF tokenizers gives for a table of hostile
strings with all-MiniLM-L6-v2's tokenizer (bert-base-uncased's vocabulary,
the one in uncased/vocab.txt.gz).

    python3 testdata/gen_golden.py /path/to/all-MiniLM-L6-v2/tokenizer.json

Each row has the text, "ids" (tokenizer.encode(text): [CLS] ... [SEP],
special tokens found in the text) and "ids16" (the same truncated to 16).
"""
import json
import sys

from tokenizers import Tokenizer

long_word = "a" * 100
texts = [
    "",
    " ",
    "\t\n\r ",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "def parse_config(path: str) -> dict[str, Any]:",
    "    return self._cache.get(key, default)  # TODO(bob): evict",
    "func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {",
    "if (x != nullptr && x->next) { x = x->next; } // C++",
    "SELECT id, name FROM users WHERE email LIKE '%@example.com';",
    "HTTPServerError XMLHttpRequest parseJSONResponse getHTTPResponseCode",
    "snake_case_identifier __init__ __dunder__ kebab-case-name",
    "camelCaseVariable PascalCaseType ALL_CAPS_CONSTANT",
    "https://github.com/prunekit/pruner/issues/45?tab=comments#L10-L20",
    "user.name+tag@example.co.uk 192.168.0.1:8080 /usr/local/bin",
    "3.14159 1e-12 0x7fffffff 1_000_000 -42 +7 100%",
    "a+b=c; a*b^2 <= c/d || e && !f ~g | h & i",
    "Café naïve résumé façade jalapeño Ångström Øresund",
    "ÀÉÎÕÜ àéîõü ÇçÑñ ẞß",
    "Straße İstanbul ǅemal ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ",
    "e\u0301 a\u0308 o\u0302\u0323 Z\u0351\u0352\u0353a\u0354l\u0355g\u0356o\u0357",
    "\u0301\u0302 leading combining marks",
    "😀 😃 emoji 👩‍💻 🏳️‍🌈 👍🏽 🫠",
    "I ❤️ Go ✓ ✗ ★ → ← ⇒ ∀x∈ℝ: x² ≥ 0",
    "中文分词测试 北京大学",
    "日本語のテキスト カタカナ ひらがな 漢字",
    "한국어 텍스트 안녕하세요",
    "mixed中文and English混合text",
    "العربية נֵר עִבְרִית हिन्दी ไทย",
    "Ｆｕｌｌｗｉｄｔｈ　ｓｐａｃｅ １２３",
    "ﬁ ﬂ ﬀ ﬃ ligatures ½ ¼ ² ³ ™ ©",
    "zero\u200bwidth\u200cjoiner\u200dx\u2060y \ufeffBOM",
    "nul\x00byte and\x01control\x1fchars\x7f and \x85NEL \x0bVT \x0cFF",
    "soft\u00adhyphen no\u00a0break\u2028line\u2029para\u3000ideo",
    "private \ue000\uf8ff use \U000f0000 and replacement \ufffd char",
    "unassigned \u0378 \U000e0080 chars",
    "rtl \u202ehello\u202c \u200fmark",
    "tab\tseparated\tvalues\nand\r\nnewlines",
    "[CLS] [SEP] [PAD] [MASK] [UNK] literal special tokens",
    "a[SEP]b[MASK]c[CLS]",
    "[sep] [Sep] [ SEP ] [SEP[SEP]]",
    "##ing ## # ### word##piece",
    long_word,
    long_word + "b",
    "x" + long_word + " short",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 2,
    "!!!???...,,,;;;:::---___===+++",
    "'quoted' \"double\" `backtick` «guillemets» „low“ ‘curly’",
    "¿Qué? ¡Hola! ‽ ⁇ ⸘",
    "$ € £ ¥ ₹ ₿ ¢ 100$ $100",
    "line1\nline2\n\n\nline5",
    "\n".join(["    x = foo(a, b)  # comment"] * 20),
    "error: cannot find symbol\n  --> src/main.rs:10:5\n   |\n10 |     let x: i32 = \"str\";\n   |            ^^^ expected i32",
    "Traceback (most recent call last):\n  File \"/app/main.py\", line 42, in <module>\n    raise ValueError('bad')\nValueError: bad",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐁𝐨𝐥𝐝 𝕕𝕠𝕦𝕓𝕝𝕖",
    "Ⅻ ⅷ ① ⑴ ⒜",
    "ΑΒΓ αβγ АБВ абв Ωμέγα Ёлка",
    "x" * 30 + "y" * 30 + " " + "ab" * 60,
    " ".join(["word"] * 40),
    "𓀀𓀁 𐐷 𝄞 \U0001F9FF \U00011938",
    "٫٬ ؍ ؛ ؟ ۔ ׃ ।",
]

tok = Tokenizer.from_file(sys.argv[1])
tok.no_padding()
rows = []
for text in texts:
    tok.no_truncation()
    ids = tok.encode(text).ids
    tok.enable_truncation(16)
    ids16 = tok.encode(text).ids
    rows.append({"text": text, "ids": ids, "ids16": ids16})

with open("golden.json", "w", encoding="utf-8") as f:
    json.dump({"tokenizers": __import__("tokenizers").__version__, "rows": rows}, f, ensure_ascii=True, indent=0)
    f.write("\n")
