"""A page whose load never finishes: `/` answers at once, the image it shows never arrives.

    python slow_page.py PORT

A browser asked for a screenshot of `/` waits for the page's load event forever, so only its
timeout ends it. Prints `ready` once it listens.
"""

from __future__ import annotations

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = b'<html><body><h1>almost there</h1><img src="/never.png"></body></html>'


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path != "/":
            time.sleep(3600)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
