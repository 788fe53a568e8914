"""A hostile remote source for the redirect tests: it answers requests with STATUS and a
Location on another server (TARGET followed by the requested path). In `listing` mode a
PROPFIND is answered with a WebDAV listing of one file, so that only its download is
redirected.

usage: redirecting.py PORT STATUS TARGET [listing]
"""

import http.server
import sys

LISTING = """<?xml version="1.0" encoding="utf-8"?>
<d:multistatus xmlns:d="DAV:">
  <d:response><d:href>{folder}</d:href>
    <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop>
    <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
  <d:response><d:href>{folder}secret.txt</d:href>
    <d:propstat><d:prop><d:resourcetype/><d:getcontentlength>6</d:getcontentlength>
    <d:getetag>"1"</d:getetag></d:prop>
    <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.redirect()

    def do_PROPFIND(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        if MODE == "listing":
            body = LISTING.format(folder=self.path).encode()
            self.send_response(207)
            self.send_header("Content-Type", "application/xml; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.redirect()

    def do_POST(self):
        self.redirect()

    def redirect(self):
        self.send_response(STATUS)
        self.send_header("Location", TARGET + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()


if __name__ == "__main__":
    port, STATUS, TARGET = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    MODE = sys.argv[4] if len(sys.argv) > 4 else "redirect"
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
