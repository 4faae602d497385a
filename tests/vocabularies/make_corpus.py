#!/usr/bin/env python3
"""The tokenizer corpus: tests/vocabularies/corpus.jsonl (hand-picked lines: prose, code,
numbers, white space of every kind, accents, Greek, Cyrillic, CJK, emoji, special tokens' text),
then N lines drawn from the same kinds of characters with a fixed seed, one JSON string a line.

  usage: make_corpus.py OUT.jsonl [--random N] [--seed S]"""
import argparse
import json
import os
import random

POOLS = ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " ", "  ", "\t", "\n", "\r\n",
         ".,;:!?'\"-()[]{}<>/\\@#$%^&*_+=|~`", "éèêëàâäôöûüçñßÆØÅ", "αβγδεζηθλμπσωΑΒΓΔ", "абвгдеёжзийклмнАБВГД",
         "你好世界中文字符测试", "日本語ひらがなカタカナ", "한국어텍스트", "😀👍🏽🚀🇫🇷❤️", "\u00a0\u2009\u3000\u200b\u0085"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--random", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl"), encoding="utf-8") as f:
        lines = [json.loads(l) for l in f if l.strip()]
    for _ in range(args.random):
        words = []
        for _ in range(rng.randint(1, 12)):
            pool = rng.choice(POOLS)
            words.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 8))))
        lines.append(rng.choice(["", " "]).join(words))
    with open(args.out, "w", encoding="utf-8") as f:
        for l in lines:
            f.write(json.dumps(l, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
