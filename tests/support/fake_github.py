"""A fake of the part of GitHub's REST API the pairbench Action calls, served on localhost.

It keeps issue comments in memory: list them (``GET .../issues/N/comments``, paginated), post one
(``POST``) and edit one (``PATCH .../issues/comments/ID``), each with the bearer token it was
given, and records every request. The Action's own code talks to it over real HTTP through
``GITHUB_API_URL``.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_COMMENTS = re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments")
_COMMENT = re.compile(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)")


@dataclass
class FakeGitHub:
    """The fake's state: comments by (repository, issue), and the requests it served."""

    token: str
    comments: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    next_id: int = 1000

    def add(self, repository: str, number: int, body: str, user: str = "someone") -> dict:
        comment = {"id": self.next_id, "body": body, "user": {"login": user},
                   "html_url": f"https://github.test/{repository}/pull/{number}#issuecomment-{self.next_id}"}
        self.next_id += 1
        self.comments.setdefault((repository, number), []).append(comment)
        return comment

    def find(self, repository: str, comment_id: int) -> dict | None:
        return next((c for (repo, _), listed in self.comments.items() if repo == repository
                     for c in listed if c["id"] == comment_id), None)


def _handler(state: FakeGitHub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _reply(self, status: int, payload) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict:
            return json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")

        def _serve(self, method: str) -> None:
            url = urlsplit(self.path)
            state.requests.append((method, url.path))
            if self.headers.get("Authorization") != f"Bearer {state.token}":
                return self._reply(401, {"message": "Bad credentials"})
            listing, single = _COMMENTS.fullmatch(url.path), _COMMENT.fullmatch(url.path)
            if listing and method == "GET":
                query = parse_qs(url.query)
                page, per_page = int(query.get("page", ["1"])[0]), int(query.get("per_page", ["30"])[0])
                found = state.comments.get((listing[1], int(listing[2])), [])
                return self._reply(200, found[(page - 1) * per_page: page * per_page])
            if listing and method == "POST":
                return self._reply(201, state.add(listing[1], int(listing[2]), self._body()["body"], "github-actions[bot]"))
            if single and method == "PATCH":
                comment = state.find(single[1], int(single[2]))
                if comment is None:
                    return self._reply(404, {"message": "Not Found"})
                comment["body"] = self._body()["body"]
                return self._reply(200, comment)
            return self._reply(404, {"message": "Not Found"})

        def do_GET(self):
            self._serve("GET")

        def do_POST(self):
            self._serve("POST")

        def do_PATCH(self):
            self._serve("PATCH")

    return Handler


class FakeGitHubServer:
    """``with FakeGitHubServer(token) as (url, state)``: the fake served on a free local port."""

    def __init__(self, token: str):
        self.state = FakeGitHub(token)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}", self.state

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
