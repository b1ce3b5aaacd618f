"""MkDocs hook: the repository files the docs link to become part of the site.

The pages under ``docs/`` link to files outside it as the repository lays them out
(``../benchmarks/results/calibration.md``, ``../examples/github-actions.yml``), so the
links work where the Markdown is read in the repository. This hook adds each such
file under ``benchmarks/`` and ``examples/`` to the site under ``repository/`` (Markdown rendered as a page, anything else
copied as it is), following links from the files it adds too, so the built site has
no dangling link and ``mkdocs build --strict`` checks those links and their anchors
as it checks the pages'. A link to a file that does not exist is left alone, and the
build warns about it. Named in ``mkdocs.yml`` under ``hooks:``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files, InclusionLevel

# inline links and images: [text](target) and ![alt](target), a target without spaces
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
SITE_FOLDER = "repository"
# the folders whose files the site takes in: the studies and the examples (not the README or the
# changelog, which link to files as the top of the repository lays them out)
TAKEN = ("benchmarks", "examples")


def _outside_targets(file: File) -> list[str]:
    """The docs-relative paths (starting with ``../``) of the files outside the docs this file links to."""
    text = FENCE.sub("", Path(file.abs_src_path).read_text(encoding="utf-8"))
    found = []
    for url in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", url) or url.startswith(("#", "/")):
            continue
        path = url.split("#", 1)[0]
        if path:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(file.src_uri), path))
            if target.startswith("../"):
                found.append(target)
    return found


def _site_file(target: str, docs: Path, repo: Path, config) -> File | None:
    source = (docs / target).resolve()
    if not source.is_file() or repo not in source.parents:
        return None
    inside = source.relative_to(repo).as_posix()
    if inside.split("/", 1)[0] not in TAKEN:
        return None
    if inside.endswith(".md"):
        stem = inside[:-3]
        dest = f"{SITE_FOLDER}/{stem}/index.html" if config.use_directory_urls else f"{SITE_FOLDER}/{stem}.html"
    else:
        dest = f"{SITE_FOLDER}/{inside}"
    return File(target, src_dir=str(docs), dest_dir=config.site_dir,
                use_directory_urls=config.use_directory_urls, dest_uri=dest,
                inclusion=InclusionLevel.NOT_IN_NAV)  # in the site, outside the nav (and not hidden for its "..")


def on_files(files: Files, config) -> Files:
    docs = Path(config.docs_dir).resolve()
    repo = docs.parent
    pending = [f for f in files if f.is_documentation_page()]
    while pending:
        for target in _outside_targets(pending.pop()):
            if files.get_file_from_path(target) is not None:
                continue
            added = _site_file(target, docs, repo, config)
            if added is not None:
                files.append(added)
                if added.is_documentation_page():
                    pending.append(added)
    return files


def on_page_markdown(markdown: str, page, config, files: Files) -> str:
    """In a repository file the hook added, a link back into ``docs/`` (``../docs/bench.md``) becomes
    the URL of that page in the site; one to a page that does not exist is left for the build to
    warn about."""
    if not page.file.src_uri.startswith("../"):
        return markdown
    docs = Path(config.docs_dir).resolve()
    here = page.file.url if page.file.url.endswith("/") else posixpath.dirname(page.file.url) + "/"

    def to_site(match: re.Match) -> str:
        url = match.group(1)
        path, _, anchor = url.partition("#")
        if not path or re.match(r"^[a-z][a-z0-9+.-]*:", url):
            return match.group(0)
        source = (Path(page.file.abs_src_path).parent / path).resolve()
        if docs not in source.parents:
            return match.group(0)
        target = files.get_file_from_path(source.relative_to(docs).as_posix())
        if target is None:
            return match.group(0)
        relative = posixpath.relpath(target.url or ".", here.rstrip("/") or ".")
        relative = relative + "/" if target.url.endswith("/") and not relative.endswith("/") else relative
        return match.group(0).replace(url, relative + (f"#{anchor}" if anchor else ""))

    return LINK.sub(to_site, markdown)
