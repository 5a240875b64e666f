#!/usr/bin/python3
"""openapi_check.py OPENAPI INDEX -- validate the daemon's answers against
the API's description (docs/openapi.json).

INDEX has one line per answer, tab-separated: METHOD, PATH (as sent,
without the query), STATUS, FILE (the body).  For each answer:
- the path and method must be an operation of the description, and the
  status one of its documented responses (or "default");
- a JSON response's body must be valid against its schema, where every
  object schema that lists properties and says nothing about
  additionalProperties is taken as closed: a key the daemon sends that
  the description does not list fails too (so neither can drift).
Prints one line per failure and what was covered; exit 0 when all match,
1 otherwise, 77 when python3-jsonschema is missing.
"""
import copy
import json
import re
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (make deps)")
    sys.exit(77)


def closed(node):
    """A copy of the description where objects with properties are
    closed unless they say otherwise."""
    if isinstance(node, dict):
        out = {k: closed(v) for k, v in node.items()}
        if ("properties" in out and isinstance(out["properties"], dict)
                and "additionalProperties" not in out
                and "unevaluatedProperties" not in out
                and "patternProperties" not in out):
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [closed(v) for v in node]
    return node


def find_op(doc, method, path):
    """(template, operation) for a concrete path; literal segments win
    over {parameters}."""
    best = None
    for tmpl, item in doc["paths"].items():
        rx = "^" + re.sub(r"\\\{[^/]+\\\}", "[^/]+", re.escape(tmpl)) + "$"
        if not re.match(rx, path):
            continue
        score = tmpl.count("{")
        if best is None or score < best[0]:
            best = (score, tmpl, item)
    if best is None:
        return None, None
    return best[1], best[2].get(method.lower())


def main():
    doc = json.load(open(sys.argv[1]))
    strict = closed(doc)
    resolver = jsonschema.RefResolver("", strict)
    failures = 0
    seen = set()
    n = 0
    for line in open(sys.argv[2]):
        method, path, status, fname = line.rstrip("\n").split("\t")
        n += 1
        where = "%s %s -> %s" % (method, path, status)
        tmpl, op = find_op(strict, method, path)
        if op is None and (status, tmpl is None) in (("404", True),
                                                     ("405", False)):
            # no such path (404) or not that method (405): the
            # description's Error, as every error
            op = {"responses": {status: {"content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Error"}}}}}}
            tmpl = "(none)" if tmpl is None else tmpl
        if op is None:
            print("FAIL: %s: no such operation in the description" % where)
            failures += 1
            continue
        seen.add((method, tmpl, status))
        resp = op["responses"].get(status) or op["responses"].get("default")
        if resp is None:
            print("FAIL: %s: status %s is not documented for %s %s"
                  % (where, status, method, tmpl))
            failures += 1
            continue
        if "$ref" in resp:
            resp = resolver.resolve(resp["$ref"])[1]
        content = resp.get("content", {})
        body = open(fname, "rb").read()
        if "application/json" not in content:
            if body and not content:
                print("FAIL: %s: a body the description does not have"
                      % where)
                failures += 1
            continue
        try:
            value = json.loads(body)
        except ValueError as e:
            print("FAIL: %s: the body is not JSON: %s" % (where, e))
            failures += 1
            continue
        schema = content["application/json"]["schema"]
        validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
        errs = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        for e in errs[:5]:
            print("FAIL: %s: at %s: %s" % (
                where, "/".join(str(p) for p in e.absolute_path) or "(top)",
                e.message[:300]))
        if errs:
            failures += 1
    ops = sum(1 for item in doc["paths"].values() for m in item
              if m in ("get", "put", "post", "delete", "patch"))
    covered = len({(m, t) for m, t, _ in seen if t in doc["paths"]
                   and m.lower() in doc["paths"][t]})
    print("openapi_check: %d answers, %d operations of %d covered, "
          "%d failures" % (n, covered, ops, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
