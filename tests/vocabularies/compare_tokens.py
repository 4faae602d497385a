#!/usr/bin/env python3
"""Compares two tokenizers' JSON lines ({"ids": [...], "text": "..."} a line, one line per text
of the corpus): prints the lines whose ids differ (with the text) and a summary
"LABEL: N of M lines identical (ids), N of M detokenized alike, K round trips exact where the
reference's is".
Exits 1 on any difference.

  usage: compare_tokens.py LABEL CORPUS.jsonl OURS.jsonl REFERENCE.jsonl"""
import json
import sys


def main():
    label, corpus, ours, ref = sys.argv[1:5]
    texts = [json.loads(l) for l in open(corpus, encoding="utf-8") if l.strip()]
    a = [json.loads(l) for l in open(ours, encoding="utf-8")]
    b = [json.loads(l) for l in open(ref, encoding="utf-8")]
    if not (len(texts) == len(a) == len(b)):
        print(f"{label}: {len(texts)} texts, {len(a)} lines ours, {len(b)} the reference's")
        sys.exit(1)
    same_ids = same_text = ref_round_trips = same_detok = 0
    shown = 0
    for t, x, y in zip(texts, a, b):
        if x["ids"] == y["ids"]:
            same_ids += 1
        elif shown < 10:
            shown += 1
            print(f"{label}: {json.dumps(t, ensure_ascii=False)}\n  ours      {x['ids']}\n  reference {y['ids']}")
        same_detok += x["text"] == y["text"]
        if y["text"] == t:
            ref_round_trips += 1
            same_text += x["text"] == t
    n = len(texts)
    print(f"{label}: {same_ids} of {n} lines identical (ids), {same_detok} of {n} detokenized alike; round trip "
          f"exact for {same_text} of the {ref_round_trips} lines where llama.cpp's is")
    sys.exit(0 if same_ids == n and same_detok == n and same_text == ref_round_trips else 1)


if __name__ == "__main__":
    main()
