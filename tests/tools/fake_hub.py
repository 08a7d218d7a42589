#!/usr/bin/env python3
"""A stand-in for the Hugging Face hub on loopback, for brisk's download tests.

Serves ROOT/OWNER/REPO/PATH at /OWNER/REPO/resolve/main/PATH (with HTTP Range support, as the hub's
CDN does), and /api/models/OWNER/REPO with the repository's file list. With --cut-first N, the first
download of each file is cut off after N bytes, to exercise resuming. Writes the chosen port to
--port-file and logs each request's Range header to --log.
"""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
cut_done = set()


class Hub(BaseHTTPRequestHandler):
    def log_message(self, fmt, *a):
        pass

    def do_GET(self):
        with open(args.log, "a") as log:
            log.write(f"{self.path} range={self.headers.get('Range')}\n")
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) == 4 and parts[0] == "api" and parts[1] == "models":
            repo = os.path.join(args.root, parts[2], parts[3])
            if not os.path.isdir(repo):
                return self.send_error(404)
            files = []
            for d, _, names in os.walk(repo):
                for n in names:
                    files.append({"rfilename": os.path.relpath(os.path.join(d, n), repo)})
            body = json.dumps({"id": parts[2] + "/" + parts[3], "siblings": files}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if len(parts) < 5 or parts[2] != "resolve" or parts[3] != "main" or ".." in parts:
            return self.send_error(404)
        path = os.path.join(args.root, parts[0], parts[1], *parts[4:])
        if not os.path.isfile(path):
            return self.send_error(404)
        data = open(path, "rb").read()
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        body = data[start:]
        if args.cut_first and path not in cut_done:
            cut_done.add(path)
            self.wfile.write(body[: args.cut_first])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--cut-first", type=int, default=0)
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.timeout = 1
    # Serve for at most 5 minutes, so a test that dies never leaves it running for long.
    import time
    end = time.time() + 300
    while time.time() < end:
        server.handle_request()


if __name__ == "__main__":
    sys.exit(main())
