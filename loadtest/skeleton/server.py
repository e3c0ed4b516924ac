"""A placeholder, not a stack: answers GET and HEAD, /hello as the contract says and 404 for any
other path (other methods get http.server's own 501 page), so that `make verify` runs at once and
lists what is left. Replace it with your framework's server.

Configuration comes from the environment only: every variable of shared-schema/defaults.env, PORT
and STACK_NAME (the harness passes them all).
"""
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TEXT = "text/plain; charset=utf-8"
HELLO = b"Hello, World!"
NOT_FOUND = b"Not Found"  # the contract's error bodies end without a newline


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # http.server's default, HTTP/1.0, would close after every answer

    def version_string(self) -> str:
        # The Server header: http.server would send "BaseHTTP/0.6 Python/3.x".
        return os.environ["STACK_NAME"]

    def do_GET(self) -> None:
        self.answer(with_body=True)

    def do_HEAD(self) -> None:
        self.answer(with_body=False)

    def answer(self, with_body: bool) -> None:
        path = self.path.partition("?")[0]
        status, body = (200, HELLO) if path == "/hello" else (404, NOT_FOUND)
        self.send_response(status)  # also sends Date and Server
        self.send_header("Content-Type", TEXT)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def log_request(self, code="-", size="-") -> None:
        pass  # a line per request would drown the run log under load; errors are still logged


def main() -> None:
    server = ThreadingHTTPServer((os.environ["HOST"], int(os.environ["PORT"])), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
