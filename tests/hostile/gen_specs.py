#!/usr/bin/python3
"""gen_specs.py OUTDIR -- write the hostile spec cases that are too big or
too binary to keep as files: each OUTDIR/NAME.yaml starts with the same
"# expect: SUBSTRING" line as the files in tests/hostile/spec/.
"""
import os
import sys

HEAD = "pool:\n  name: big\n  team: research\n  count: 1\n  gpu: {model: A10G}\n"


def write(out, name, expect, body):
    data = ("# expect: %s\n" % expect).encode() + (
        body if isinstance(body, bytes) else body.encode())
    with open(os.path.join(out, name + ".yaml"), "wb") as f:
        f.write(data)


def main(out):
    os.makedirs(out, exist_ok=True)
    # bigger than any spec needs (the loader reads at most 1 MiB)
    write(out, "gen-oversized", "larger than",
          HEAD + "  labels:\n" + "".join("    k%d: %s\n" % (i, "v" * 60)
                                         for i in range(40000)))
    write(out, "gen-10k-labels", "labels; at most",
          HEAD + "  labels: {" + ", ".join("k%d: v" % i for i in range(10000)) + "}\n")
    write(out, "gen-deep-flow", "nesting deeper than",
          HEAD + "  labels: " + "[" * 100 + "]" * 100 + "\n")
    write(out, "gen-deep-block", "nesting deeper than",
          "pool:\n" + "".join("  " * (i + 1) + "k%d:\n" % i for i in range(100)) +
          "  " * 101 + "x\n")
    write(out, "gen-deep-10000", "nesting deeper than",
          HEAD + "  labels: " + "{a: " * 10000 + "1" + "}" * 10000 + "\n")
    # billion laughs
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, 10):
        bomb += "%s: &%s [%s]\n" % (chr(97 + i), chr(97 + i),
                                   ",".join(["*" + chr(96 + i)] * 9))
    write(out, "gen-alias-bomb", "YAML aliases (*a) are not allowed",
          bomb + HEAD + "  labels: *j\n")
    write(out, "gen-alias-merge", "not allowed",
          "base: &b {name: x, team: research}\npool:\n  <<: *b\n  count: 1\n"
          "  gpu: {model: A10G}\n")
    write(out, "gen-nul", "NUL byte",
          b"pool:\n  name: ok\x00evil\n  team: research\n  count: 1\n"
          b"  gpu: {model: A10G}\n")
    write(out, "gen-invalid-utf8", "not valid UTF-8",
          b"pool:\n  name: ok\n  team: research\n  labels: {a: \"\xff\xfe\"}\n"
          b"  count: 1\n  gpu: {model: A10G}\n")
    write(out, "gen-overlong-utf8", "not valid UTF-8",
          b"pool:\n  name: ok\n  team: research\n  labels: {a: \"\xc0\xaf..\xc0\xaf\"}\n"
          b"  count: 1\n  gpu: {model: A10G}\n")
    write(out, "gen-surrogate-utf8", "not valid UTF-8",
          b"pool:\n  name: ok\n  team: research\n  labels: {a: \"\xed\xa0\x80\"}\n"
          b"  count: 1\n  gpu: {model: A10G}\n")
    write(out, "gen-truncated-utf8", "not valid UTF-8",
          b"pool:\n  name: ok\n  team: research\n  count: 1\n  gpu: {model: A10G}\n"
          b"  labels: {a: \"\xe6\x97\"}\n")
    write(out, "gen-long-scalar", "larger than the limit of 262144 bytes",
          "pool:\n  name: " + "a" * 500000 + "\n  team: research\n  count: 1\n"
          "  gpu: {model: A10G}\n")
    write(out, "gen-100k-models", "pool.gpu.model",
          "pool:\n  name: ok\n  team: research\n  count: 1\n  gpu: {model: [" +
          ",".join("M%d" % i for i in range(60000)) + "]}\n")
    write(out, "gen-huge-int", "pool.gpu.memory_gb",
          "pool:\n  name: ok\n  team: research\n  count: 1\n  gpu: {model: A10G, "
          "memory_gb: " + "9" * 5000 + "}\n")
    write(out, "gen-many-docs", "more than 1000 pools in one file",
          "".join("---\npool: {name: p%d, team: research, count: 1, gpu: {model: A10G}}\n" % i
                  for i in range(3000)) + "---\npool: {name: \"BAD NAME\"}\n")
    write(out, "gen-ansi-key", "control characters are not allowed",
          HEAD + "  \x1b[2J\x1b[31mowned: 1\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
