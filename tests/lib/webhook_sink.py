#!/usr/bin/python3
"""webhook_sink.py -- a webhook receiver on loopback for
tests/integration/pool_webhook.sh.

  webhook_sink.py DIR [FAIL]

Listens on 127.0.0.1 (an ephemeral port, written to DIR/port); every
POST's body is written to DIR/N.json (N = 1, 2, ...), and its answer's
status appended to DIR/status: 500 for the first FAIL posts (default 0),
then 200.
"""
import http.server
import os
import sys

DIR = sys.argv[1]
FAIL = int(sys.argv[2]) if len(sys.argv) > 2 else 0
seen = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        seen += 1
        code = 500 if seen <= FAIL else 200
        tmp = os.path.join(DIR, ".tmp")
        with open(tmp, "wb") as f:
            f.write(body)
        os.rename(tmp, os.path.join(DIR, "%d.json" % seen))
        with open(os.path.join(DIR, "status"), "a") as f:
            f.write("%d\n" % code)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, fmt, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, ".port"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(DIR, ".port"), os.path.join(DIR, "port"))
srv.serve_forever()
