#!/usr/bin/env python3
"""Summarize numbers and words from the input JSON; the result goes to SANDBOX_OUTPUT."""
import json
import os
import sys


def read_input():
    path = os.environ.get("SKILL_INPUT_FILE")
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:
        text = sys.stdin.read()
    return json.loads(text) if text.strip() else {}


def main():
    data = read_input()
    numbers = [float(n) for n in data.get("numbers", [])]
    words = str(data.get("text", "")).split()
    result = {
        "count": len(numbers),
        "sum": sum(numbers),
        "mean": sum(numbers) / len(numbers) if numbers else None,
        "min": min(numbers) if numbers else None,
        "max": max(numbers) if numbers else None,
        "words": len(words),
    }
    out = os.environ.get("SANDBOX_OUTPUT")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(result, f)
    print(f"processed {len(numbers)} numbers and {len(words)} words", file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
