#!/usr/bin/python3
"""check_output.py KIND FILE... -- what hostile input may never do to
gpubroker's output.

  text FILE    valid UTF-8, no control characters but newline and tab,
               at most 512 KiB (a table for people: no terminal escapes,
               no forged lines, bounded)
  json FILE    valid JSON (of any shape), at most 8 MiB
  refusals FILE
               a plan's JSON (-o json --explain): every refusal carries
               its reason as a string
Prints the first problem and exits 1.
"""
import json
import sys


def text(path):
    data = open(path, "rb").read()
    if len(data) > 512 * 1024:
        return "%d bytes of text output" % len(data)
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return "not UTF-8: %s" % e
    for i, ch in enumerate(s):
        if (ord(ch) < 0x20 and ch not in "\n\t") or 0x7f <= ord(ch) < 0xa0:
            line = s.count("\n", 0, i) + 1
            return "control character %r on line %d: %r" % (
                ch, line, s.splitlines()[line - 1][:120])
    return None


def load(path):
    data = open(path, "rb").read()
    if len(data) > 8 * 1024 * 1024:
        raise ValueError("%d bytes of JSON" % len(data))
    return json.loads(data)


def js(path):
    try:
        load(path)
    except ValueError as e:
        return "invalid JSON: %s" % e
    return None


def refusals(path):
    try:
        j = load(path)
    except ValueError as e:
        return "invalid JSON: %s" % e
    for p in j if isinstance(j, list) else [j]:
        for r in p.get("refusals", []):
            if not isinstance(r.get("reason"), str):
                return "a refusal without its reason: %s" % json.dumps(r)[:300]
    return None


def main(argv):
    fn = {"text": text, "json": js, "refusals": refusals}[argv[1]]
    for path in argv[2:]:
        why = fn(path)
        if why:
            print("%s: %s" % (path, why))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
