"""http_fuzz.py -- throws malformed and random requests at every cloudsim
listener and checks each answer has the provider's shape (EC2 XML error
envelope, ARM / Google / Lambda JSON), never a dropped connection.

Usage: /usr/bin/python3 http_fuzz.py AWS_URL AZURE_URL GCP_URL CONTROL_URL [N [LAMBDA_URL]]
Exit 1 with a message on the first bad answer.
"""
import http.client
import json
import random
import socket
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET

aws, azure, gcp, ctl = sys.argv[1:5]
n = int(sys.argv[5]) if len(sys.argv) > 5 else 300
lam = sys.argv[6] if len(sys.argv) > 6 else None
rnd = random.Random(1234)

PATHS = {
    "aws": ["/", "/?Action=RunInstances", "/x/../", "//", "/%zz", "/?a=%",
            "/?Action=DescribeInstances&Version=2016-11-15"],
    "azure": ["/", "/t/oauth2/v2.0/token", "/api/retail/prices",
              "/api/retail/prices?$filter=%27", "/subscriptions",
              "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachines/v",
              "/subscriptions/s/providers/Microsoft.Compute/locations/l/operations/o",
              "/subscriptions/%00/x", "/subscriptions/s/resourceGroups/g/providers/Microsoft.Network/networkInterfaces/n"],
    "gcp": ["/", "/token", "/compute/v1/projects/p/zones/z/instances",
            "/compute/v1/projects/p/aggregated/instances?filter=%28",
            "/compute/v1/projects/p/zones/z/operations/o/wait",
            "/cloudbilling/v1/services/6F81-5844-456A/skus?pageToken=%%",
            "/compute/v1/projects/%zz"],
    "lambda": ["/", "/api/v1/instance-types", "/api/v1/instances",
               "/api/v1/instances/%zz", "/api/v1/instances/a/b",
               "/api/v1/instance-operations/launch",
               "/api/v1/instance-operations/terminate", "/api/v1/ssh-keys",
               "/api/v1/ssh-keys/%00", "/api/v1/" + "x" * 300],
    "control": ["/_sim/scenario", "/_sim/reclaim", "/_sim/instances?live=%",
                "/_sim/bill", "/_sim/nothing"],
}
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]


def body():
    k = rnd.randrange(8)
    if k == 0:
        return b""
    if k == 1:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400)))
    if k == 2:
        return b"[" * rnd.randrange(1, 50000)
    if k == 3:
        return b'{"location": "eastus", "properties": {"hardwareProfile": 5}}'
    if k == 4:
        return b"Action=RunInstances&MinCount=-1&MaxCount=99999999999999999999&" + \
            b"&".join(b"P%d=%%%02x" % (i, rnd.randrange(256)) for i in range(50))
    if k == 5:
        return json.dumps({"name": "x" * 300, "machineType": None,
                           "labels": {"\u00e9": 1}}).encode()
    if k == 6:
        return b'{"capacity": [{"count": "many"}], "spot": {"schedule": 3}}'
    return b"\xff\xfe\x00garbage\x00" * rnd.randrange(1, 100)


def check(kind, status, data, ctype):
    if kind == "aws":
        if not data:
            return status in (100, 204, 304) or "empty body"
        root = ET.fromstring(data)
        if status >= 400:
            tag = root.tag.split("}")[-1]
            if tag != "Response" or root.find("Errors/Error/Code") is None \
                    or root.find("RequestID") is None:
                return "EC2 error without <Response><Errors><Error><Code>"
        return True
    if kind in ("azure", "gcp", "control"):
        if not data:
            return True
        j = json.loads(data)
        if status >= 400 and kind == "gcp" and "error" in j and \
                isinstance(j["error"], dict) and "errors" not in j["error"]:
            return "Google error without errors[]"
        if status >= 400 and kind == "azure" and not (
                "error" in j or "code" in j):
            return "ARM error without error/code"
        return True
    if kind == "lambda":
        j = json.loads(data)
        if status >= 400 and not (isinstance(j.get("error"), dict) and
                                  "code" in j["error"] and
                                  "message" in j["error"]):
            return "Lambda error without error{code, message}"
        return True
    return True


urls = {"aws": aws, "azure": azure, "gcp": gcp, "control": ctl}
if lam:
    urls["lambda"] = lam
for i in range(n):
    kind = rnd.choice(list(urls))
    u = urllib.parse.urlparse(urls[kind])
    path = rnd.choice(PATHS[kind])
    method = rnd.choice(METHODS)
    b = body()
    headers = {"Content-Type": rnd.choice(
        ["application/json", "application/x-www-form-urlencoded",
         "text/plain", "application/xml"])}
    if rnd.random() < 0.5:
        headers["Authorization"] = rnd.choice(
            ["Bearer x", "AWS4-HMAC-SHA256 Credential=a/b/c/d/aws4_request, "
             "SignedHeaders=host, Signature=00", "AWS4-HMAC-SHA256",
             "Basic =", "Basic ====", "Basic a===", "Bearer " + "A" * 5000])
    if rnd.random() < 0.2:
        headers["X-Amz-Date"] = rnd.choice(["20260101T000000Z", "junk", ""])
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        c.request(method, path, body=b, headers=headers)
        r = c.getresponse()
        data = r.read()
        status = r.status
        ctype = r.getheader("Content-Type") or ""
    except Exception as e:  # noqa: BLE001
        print("FAIL: %s %s %s: no answer (%s)" % (kind, method, path, e))
        sys.exit(1)
    finally:
        c.close()
    if method == "HEAD":
        continue
    try:
        res = check(kind, status, data, ctype)
    except Exception as e:  # noqa: BLE001
        res = "unparsable body (%s): %r" % (e, data[:200])
    if res is not True:
        print("FAIL: %s %s %s -> %d: %s" % (kind, method, path, status, res))
        sys.exit(1)

# idle connections must not block others (thread per connection)
idle = []
for _ in range(60):
    s = socket.create_connection((urllib.parse.urlparse(aws).hostname,
                                  urllib.parse.urlparse(aws).port))
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab")
    idle.append(s)
t0 = time.time()
u = urllib.parse.urlparse(ctl)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.request("GET", "/_sim/health")
ok = c.getresponse().status == 200
for s in idle:
    s.close()
if not ok or time.time() - t0 > 5:
    print("FAIL: the control API stalled behind idle connections")
    sys.exit(1)
print("ok   - %d random/malformed requests answered in the provider's shape" % n)
print("ok   - 60 idle half-sent requests did not block the others")
