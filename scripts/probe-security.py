#!/usr/bin/env python3
"""Probes a running `shiori serve` for the holes of issues 31 and 48; prints PASS or FAIL for each.

Usage:
    scripts/probe-security.py http://127.0.0.1:8000 --admin-key A --group-key H --group hr \
        --other-key S [--data-dir DIR]

The server needs `[[auth.keys]]`: an admin key, a key holding GROUP (`--group-key`) and a key
without it (`--other-key`). The probe uploads a few files (named `probe-*`) and deletes them
again. With `--data-dir` (the server's data directory, embedded store) it also damages
`vectors.usearch` and checks that the next write rebuilds it. Exit status 1 when any probe
fails. Standard library only.
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import sys
import time
import urllib.parse
import uuid

RESULTS = []


def report(name, passed, detail=""):
    RESULTS.append(passed)
    print(f"{'PASS' if passed else 'FAIL'}  {name}" + (f"  ({detail})" if detail else ""))


class Server:
    def __init__(self, url, keys):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port or 80
        self.keys = keys

    def request(self, method, path, key=None, body=None, headers=None, raw_body=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        sent = dict(headers or {})
        if key:
            sent["Authorization"] = f"Bearer {self.keys[key]}"
        data = raw_body
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        connection.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, text

    def upload(self, name, text, groups):
        boundary = "probe-" + uuid.uuid4().hex
        body = (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"groups\"\r\n\r\n{groups}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: text/plain\r\n\r\n{text}\r\n--{boundary}--\r\n"
        ).encode()
        headers = {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Shiori-Request": "1",
        }
        return self.request("POST", "/api/documents?replace=true", "admin", headers=headers,
                            raw_body=body)

    def delete(self, name):
        return self.request("DELETE", f"/api/documents/{name}", "admin")

    def query(self, key, body):
        status, _, text = self.request("POST", "/api/query", key, body)
        return status, text


def probe_groups(server, group):
    """1. A record's empty or differently-cased groups neither widen nor hide it."""
    records = "\n".join(json.dumps(r) for r in [
        {"doc_id": "probe-empty", "text": "Zebrafinch payroll note one.", "groups": []},
        {"doc_id": "probe-blank", "text": "Zebrafinch payroll note two.", "groups": ""},
        {"doc_id": "probe-upper", "text": "Zebrafinch payroll note three.",
         "groups": [group.upper()]},
    ]) + "\n"
    status, _, text = server.upload("probe-groups.jsonl", records, group)
    if status != 201:
        report("1 groups: upload", False, f"{status} {text[:200]}")
        return
    status, _, _ = server.request("GET", "/api/documents/probe-groups.jsonl", "other")
    report("1 groups: an empty record `groups` keeps the file's from GET /api/documents/{id}",
           status == 404, f"status {status}")
    question = {"question": "zebrafinch payroll note", "pipeline": "extractive", "top_k": 10}
    status, text = server.query("other", question)
    report("1 groups: ... and from /api/query", status == 200 and "probe-" not in text,
           f"status {status}")
    status, text = server.query("group", question)
    found = sum(f"probe-{name}" in text for name in ("empty", "blank", "upper"))
    report("1 groups: the group's key reads all three (HR is hr)", found == 3,
           f"{found}/3 found")
    server.delete("probe-groups.jsonl")


def probe_headers(server):
    """2. Frame protection and the rest of the header set, on the page and on an error."""
    for path in ("/", "/api/no-such-route"):
        _, headers, _ = server.request("GET", path, "admin")
        csp = headers.get("content-security-policy", "")
        passed = ("frame-ancestors 'none'" in csp
                  and headers.get("x-frame-options", "").upper() == "DENY"
                  and headers.get("x-content-type-options") == "nosniff"
                  and "referrer-policy" in headers)
        report(f"2 headers on {path}", passed, csp or "no Content-Security-Policy")


def probe_damaged_index(server, data_dir):
    """3. A damaged vector index is rebuilt at the next open and said so."""
    if not data_dir:
        print("SKIP  3 damaged vector index (give --data-dir, embedded store)")
        return
    path = os.path.join(data_dir, "vectors.usearch")
    if not os.path.exists(path):
        print("SKIP  3 damaged vector index (no vectors.usearch: PostgreSQL store?)")
        return
    size = os.path.getsize(path)
    with open(path, "r+b") as file:
        file.seek(max(0, size // 2 - 2048))
        file.write(os.urandom(min(4096, size // 4)))
    status, _, text = server.request("POST", "/api/reindex", "admin", {})
    _, _, stats = server.request("GET", "/api/stats", "admin")
    note = json.loads(stats).get("last_rebuild") or ""
    report("3 damaged vectors.usearch is rebuilt and shown in /api/stats",
           status == 200 and "checksum" in note, note or f"reindex {status} {text[:200]}")


def probe_paths(server, data_dir):
    """4. No body, stored errors included, names the server's folders."""
    status, _, eval_text = server.request("POST", "/api/eval", "admin", {})
    _, _, stats = server.request("GET", "/api/stats", "other")
    folders = [os.path.realpath(p) for p in (data_dir, os.path.dirname(data_dir or ""))
               if p and p != "/"]
    leaked = [f for f in folders if f in stats or f in eval_text]
    error = (json.loads(stats).get("last_reindex") or {}).get("error") or ""
    looks_absolute = any(error.startswith(p) or f" {p}" in error
                         for p in ("/home/", "/tmp/", "/srv/", "/root/", "/var/", "/work/"))
    stored = error[:120] or ("none stored: give the server an [eval] dataset that does not "
                             "exist to probe a stored error")
    report("4 /api/stats and /api/eval name no server folder", not leaked and not looks_absolute,
           f"eval {status}; last error: {stored}")


def probe_side_channels(server, group):
    """5. source_prefix oracle, hidden/missing timing, BM25 statistics of unreadable chunks."""
    for prefix in ("/", "/home/", "/etc/"):
        status, text = server.query("other", {"question": "payroll",
                                              "filters": {"source_prefix": prefix}})
        if status != 400:
            report("5 source_prefix matches shown paths only", False, f"{prefix}: {status}")
            break
    else:
        report("5 source_prefix matches shown paths only", True, "absolute prefixes are 400")

    server.upload("probe-hidden.txt", "Hidden probe text.", group)
    hidden, missing = [], []
    for _ in range(300):
        for path, times in (("/api/documents/probe-hidden.txt", hidden),
                            ("/api/documents/probe-never-uploaded.txt", missing)):
            started = time.perf_counter()
            status, _, _ = server.request("GET", path, "other")
            times.append((time.perf_counter() - started) * 1e6)
            if status != 404:
                report("5 hidden upload is a 404", False, f"{path}: {status}")
                return
    hidden_us, missing_us = statistics.median(hidden), statistics.median(missing)
    report("5 hidden and missing ids answer in equal time",
           abs(hidden_us - missing_us) < 0.1 * missing_us + 40,
           f"median hidden {hidden_us:.0f} us, missing {missing_us:.0f} us")
    server.delete("probe-hidden.txt")

    word = "quokkaprobe"
    server.upload("probe-public.txt", f"The {word} policy is public.", "")
    question = {"question": word, "pipeline": "extractive", "mode": "bm25", "top_k": 1}

    def public_score():
        status, text = server.query("other", question)
        sources = json.loads(text).get("sources", []) if status == 200 else []
        return sources[0].get("score") if sources else None

    before = public_score()
    for n in range(6):
        server.upload(f"probe-bm25-{n}.txt", f"{word} {word} restricted note {n}.", group)
    after = public_score()
    report("5 unreadable chunks leave a key's BM25 scores as they were",
           before is not None and after is not None and abs(after - before) <= 1e-5 * abs(before),
           f"the public chunk's score for the other key: {before} -> {after}")
    for n in range(6):
        server.delete(f"probe-bm25-{n}.txt")
    server.delete("probe-public.txt")


def probe_small(server):
    """6. two-stage unknown project, MCP session binding, bearer case, missing Host."""
    status, text = server.query("group", {"question": "payroll",
                                          "filters": {"projects": ["probe-nope"]},
                                          "two_stage": True})
    report("6 two_stage with an unknown project is a 400 naming it",
           status == 400 and "probe-nope" in text, f"{status}")

    accept = {"Accept": "application/json, text/event-stream"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}}
    status, headers, _ = server.request("POST", "/mcp", "group", initialize, accept)
    session = headers.get("mcp-session-id")
    if status != 200 or not session:
        report("6 MCP session bound to its key", False, f"initialize {status}")
    else:
        with_session = dict(accept, **{"Mcp-Session-Id": session})
        server.request("POST", "/mcp", "group",
                       {"jsonrpc": "2.0", "method": "notifications/initialized"}, with_session)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
        other, _, _ = server.request("POST", "/mcp", "other", listing, with_session)
        owner, _, _ = server.request("POST", "/mcp", "group", listing, with_session)
        report("6 MCP session bound to its key", other == 404 and owner == 200,
               f"other key {other}, owner {owner}")

    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    connection.request("GET", "/api/stats",
                       headers={"Authorization": f"bearer {server.keys['group']}"})
    status = connection.getresponse().status
    connection.close()
    report("6 `bearer` in lower case is accepted", status == 200, f"{status}")

    with socket.create_connection((server.host, server.port), timeout=30) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")
        reply = raw.recv(64).decode("latin-1")
    status = reply[9:12]
    report("6 a request without Host is refused", status == "400", f"{status}")


def probe_round_three(server, idle_seconds):
    """7. slow and idle clients, MCP session caps, echoes that tell a real folder from a guess."""
    with socket.create_connection((server.host, server.port), timeout=idle_seconds + 30) as idle:
        started = time.monotonic()
        try:
            closed = idle.recv(1) == b""
        except OSError:
            closed = True
        waited = time.monotonic() - started
    report("7 an idle connection is closed", closed and waited <= idle_seconds + 5,
           f"closed after {waited:.0f} s")

    # Another loopback address is another client, as a flood from elsewhere would be.
    source = ("127.0.0.2", 0) if server.host in ("127.0.0.1", "localhost") else None
    flood = []
    try:
        for _ in range(2000):
            flood.append(socket.create_connection((server.host, server.port), timeout=10,
                                                  source_address=source))
    except OSError as error:
        report("7 2,000 idle connections opened", False, f"after {len(flood)}: {error}")
    status, _, _ = server.request("GET", "/healthz")
    report("7 a request is answered past 2,000 idle connections", status == 200,
           f"{len(flood)} idle, /healthz {status}")
    for connection in flood:
        connection.close()

    accept = {"Accept": "application/json, text/event-stream"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}}
    sessions = []
    for _ in range(40):
        _, headers, _ = server.request("POST", "/mcp", "group", initialize, accept)
        sessions.append(headers.get("mcp-session-id"))
    listing = {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}
    first, _, _ = server.request("POST", "/mcp", "group", listing,
                                 dict(accept, **{"Mcp-Session-Id": sessions[0]}))
    report("7 a key's oldest MCP session closes past its cap", first == 404,
           f"first of 40 sessions: {first}")

    guesses = [os.path.realpath("."), "/srv/probe-guess/docs"]
    echoed = []
    started, _, body = server.request("POST", "/api/conversations", "group",
                                      headers={"X-Shiori-Request": "1"})
    conversation = json.loads(body).get("id") if started == 201 else None
    for guess in guesses:
        server.query("group", {"question": f"Is {guess}/a.txt here?",
                               "conversation_id": conversation})
    _, _, body = server.request("GET", f"/api/conversations/{conversation}", "group")
    for turn in json.loads(body).get("turns", []):
        echoed.append(turn.get("question"))
    report("7 a question naming a folder comes back as asked",
           echoed == [f"Is {guess}/a.txt here?" for guess in guesses], f"{echoed}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--admin-key", required=True)
    parser.add_argument("--group-key", required=True, help="a key holding --group")
    parser.add_argument("--group", required=True)
    parser.add_argument("--other-key", required=True, help="a key without --group")
    parser.add_argument("--data-dir", help="the server's data directory (embedded store)")
    parser.add_argument("--idle-seconds", type=float, default=30,
                        help="the server's --header-timeout-secs")
    args = parser.parse_args()
    server = Server(args.url, {"admin": args.admin_key, "group": args.group_key,
                               "other": args.other_key})
    probe_groups(server, args.group)
    probe_headers(server)
    probe_damaged_index(server, args.data_dir)
    probe_paths(server, args.data_dir)
    probe_side_channels(server, args.group)
    probe_small(server)
    probe_round_three(server, args.idle_seconds)
    failed = RESULTS.count(False)
    print(f"{len(RESULTS) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
