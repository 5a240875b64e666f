#!/usr/bin/python3
"""oidc_issuer.py -- a test OIDC issuer on loopback for tests/integration/oidc.sh.

  oidc_issuer.py serve DIR          serve DIR over http on 127.0.0.1 (an
                                    ephemeral port, written to DIR/port),
                                    JSON with Cache-Control: max-age=3600
  oidc_issuer.py jwks DIR PEM:KID...  write DIR/jwks.json from PEM keys
                                    (RSA or EC P-256; the public parts,
                                    read with the openssl command)
  oidc_issuer.py mint ALG KID KEY CLAIMS_JSON
                                    print a JWT: ALG RS256 / ES256 signed
                                    with `openssl dgst -sha256 -sign KEY`,
                                    HS256 with KEY's bytes as the HMAC
                                    secret, none unsigned

Keys are made by the test with openssl; no crypto library is needed.
"""
import base64
import hashlib
import hmac
import http.server
import json
import os
import re
import subprocess
import sys


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, check=True,
                          capture_output=True).stdout


def jwk(pem, kid):
    pub_der = openssl("pkey", "-in", pem, "-pubout", "-outform", "DER")
    info = openssl("pkey", "-in", pem, "-text_pub", "-noout")
    if b"ASN1 OID: prime256v1" in info or b"NIST CURVE: P-256" in info:
        point = pub_der[-65:]  # 0x04 || x || y at the end of the SPKI
        return {"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                "alg": "ES256", "x": b64url(point[1:33]), "y": b64url(point[33:])}
    mod = openssl("rsa", "-in", pem, "-noout", "-modulus").decode().strip()
    n = bytes.fromhex(mod.split("=", 1)[1])
    m = re.search(rb"Exponent: (\d+)", info)
    e = int(m.group(1)).to_bytes(3, "big").lstrip(b"\0")
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
            "n": b64url(n), "e": b64url(e)}


def der_to_raw(der):
    """An ECDSA-Sig-Value (DER SEQUENCE of two INTEGERs) as r||s."""
    out, i = b"", 2
    if der[1] & 0x80:
        i = 2 + (der[1] & 0x7f)
    for _ in range(2):
        assert der[i] == 2
        ln = der[i + 1]
        v = der[i + 2:i + 2 + ln].lstrip(b"\0")
        out += v.rjust(32, b"\0")
        i += 2 + ln
    return out


def mint(alg, kid, key, claims):
    header = {"alg": alg, "typ": "JWT"}
    if kid != "-":
        header["kid"] = kid
    si = (b64url(json.dumps(header).encode()) + "." +
          b64url(json.dumps(claims).encode())).encode()
    if alg == "none":
        return si.decode() + "."
    if alg == "HS256":
        sig = hmac.new(open(key, "rb").read(), si, hashlib.sha256).digest()
    else:
        sig = openssl("dgst", "-sha256", "-sign", key, data=si)
        if alg == "ES256":
            sig = der_to_raw(sig)
    return si.decode() + "." + b64url(sig)


class Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cache-Control", "public, max-age=3600")
        super().end_headers()

    def guess_type(self, path):
        return "application/json"

    def log_message(self, fmt, *args):
        sys.stderr.write("issuer: " + (fmt % args) + "\n")


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        d = sys.argv[2]
        os.chdir(d)
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open("port.tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        os.rename("port.tmp", "port")
        srv.serve_forever()
    elif cmd == "jwks":
        keys = [jwk(*a.split(":", 1)) for a in sys.argv[3:]]
        tmp = os.path.join(sys.argv[2], "jwks.json.tmp")
        with open(tmp, "w") as f:
            json.dump({"keys": keys}, f)
        os.rename(tmp, os.path.join(sys.argv[2], "jwks.json"))
    elif cmd == "mint":
        print(mint(sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
