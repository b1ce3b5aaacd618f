"""The pull request comment of the pairbench Action: its body, and posting it, or updating the one
the Action posted before, through GitHub's REST API.

The Action finds its own comment by a hidden marker at the very start of the body
(``<!-- pairbench-action:ID -->``; ``ID`` tells apart several uses of the Action on one pull
request); a reply quoting it starts with ``>`` and is never taken for it. Everything here is
the standard library: the Action runs it before and beside pairbench's own environment.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request

MAX_BODY = 65_536
"""GitHub refuses a comment body longer than this (characters)."""
MAX_RESPONSE = 16 * 1024 * 1024
"""The most of one API response read (bytes): a page of 100 comments is far less."""
MAX_PAGES = 50
"""Comments read at most, in pages of 100, when looking for the Action's own."""
_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")


class GitHubError(Exception):
    """A request to GitHub's API failed: what was asked, the status and GitHub's message."""


def marker(comment_id: str) -> str:
    """The hidden first line of the Action's comment for ``comment_id``."""
    if not _ID.fullmatch(comment_id):
        raise ValueError(f"comment-id must be 1-64 letters, digits, '.', '_' or '-', got {comment_id!r}")
    return f"<!-- pairbench-action:{comment_id} -->"


def escape(text: str) -> str:
    """``text`` shown literally in Markdown: punctuation backslash-escaped, ``<``, ``>``, ``&`` as
    entities, line breaks as spaces, and ``@``/``#`` kept from mentioning or linking."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = re.sub(r"([\\`*_{}\[\]()|!~])", r"\\\1", text)
    return text.replace("@", "@\u200b").replace("#", "#\u200b")


def compose(marker_line: str, sections: list[str], footer: str) -> str:
    """The comment: the marker, the sections (the first, the verdicts, cut to fit GitHub's limit
    with a line saying so), then the footer."""
    rest = "\n\n".join(s for s in sections[1:] if s)
    fixed = len(marker_line) + len(rest) + len(footer) + 200
    if fixed > MAX_BODY:  # the history alone is too long: leave it to the job's summary
        rest, fixed = "_The history is too long for a comment; it is in the job's summary._", len(footer) + 300
    first = sections[0] if sections else ""
    if len(first) + fixed > MAX_BODY:
        first = first[: MAX_BODY - fixed].rsplit("\n", 1)[0] + \
            "\n\n_Cut to fit a comment; the whole report is in the job's summary and its HTML report._"
    return "\n\n".join(part for part in (marker_line, first, rest, footer) if part) + "\n"


class GitHubApi:
    """The three calls of GitHub's REST API the Action makes, with a token (never shown)."""

    def __init__(self, base_url: str, token: str, timeout_s: float = 30.0):
        if not base_url.startswith(("https://", "http://")):
            raise ValueError(f"the API URL must be http(s), got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.timeout_s = timeout_s

    def comments(self, repository: str, number: int) -> list[dict]:
        """The pull request's comments, oldest first (at most ``MAX_PAGES`` pages)."""
        found: list[dict] = []
        for page in range(1, MAX_PAGES + 1):
            batch = self._request("GET", f"{_issue(repository, number)}/comments?per_page=100&page={page}")
            found += batch
            if len(batch) < 100:
                break
        return found

    def create_comment(self, repository: str, number: int, body: str) -> dict:
        return self._request("POST", f"{_issue(repository, number)}/comments", {"body": body})

    def update_comment(self, repository: str, comment_id: int, body: str) -> dict:
        return self._request("PATCH", f"/repos/{_repository(repository)}/issues/comments/{int(comment_id)}",
                             {"body": body})

    def _request(self, method: str, path: str, payload: dict | None = None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self._token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json",
            "User-Agent": "pairbench-action"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read(MAX_RESPONSE) or b"null")
        except urllib.error.HTTPError as exc:
            raise GitHubError(f"{method} {path.split('?')[0]}: HTTP {exc.code}: {_message(exc)}") from None
        except (urllib.error.URLError, TimeoutError, ValueError) as exc:
            raise GitHubError(f"{method} {path.split('?')[0]}: {exc}") from None


def post_or_update_comment(api: GitHubApi, repository: str, number: int, body: str, marker_line: str) -> dict:
    """Update the pull request's comment whose body begins with ``marker_line``, else post one;
    returns the comment as GitHub holds it."""
    for comment in api.comments(repository, number):
        if str(comment.get("body") or "").startswith(marker_line):
            return api.update_comment(repository, comment["id"], body)
    return api.create_comment(repository, number, body)


def _repository(repository: str) -> str:
    if not _REPOSITORY.fullmatch(repository) or ".." in repository:
        raise ValueError(f"a repository is OWNER/NAME, got {repository!r}")
    return repository


def _issue(repository: str, number: int) -> str:
    if not 0 < int(number) < 2**31:
        raise ValueError(f"a pull request number is positive, got {number!r}")
    return f"/repos/{_repository(repository)}/issues/{int(number)}"


def _message(error: urllib.error.HTTPError) -> str:
    try:
        return " ".join(str(json.loads(error.read(65536)).get("message", "")).split())[:300]
    except (ValueError, AttributeError, OSError):
        return error.reason if isinstance(error.reason, str) else ""
