"""Git's smart HTTP for the connector tests: every request is handed to `git http-backend`
(CGI) for the repositories under ROOT. Python's own CGI handler reads no chunked request body,
which is how clients stream what they send, and passes no Git-Protocol header; this one does both.

usage: git_http.py PORT ROOT
"""

import http.server
import os
import subprocess
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.backend(b"")

    def do_POST(self):
        self.backend(self.body())

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        chunks = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                self.rfile.readline()
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def backend(self, body):
        path, _, query = self.path.partition("?")
        env = dict(
            os.environ,
            GIT_PROJECT_ROOT=ROOT,
            GIT_HTTP_EXPORT_ALL="1",
            PATH_INFO=path,
            QUERY_STRING=query,
            REQUEST_METHOD=self.command,
            CONTENT_TYPE=self.headers.get("Content-Type", ""),
            CONTENT_LENGTH=str(len(body)),
            REMOTE_ADDR=self.client_address[0],
        )
        for header, variable in [
            ("Git-Protocol", "GIT_PROTOCOL"),
            ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
        ]:
            if self.headers.get(header):
                env[variable] = self.headers[header]
        result = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        head, _, content = result.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)


if __name__ == "__main__":
    PORT, ROOT = int(sys.argv[1]), sys.argv[2]
    http.server.HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
