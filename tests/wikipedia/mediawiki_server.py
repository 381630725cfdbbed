"""A real MediaWiki 1.39 on 127.0.0.1 for the live-adapter tests: Debian's ``mediawiki`` package, SQLite, PHP's server.

Follows ``../shared/mediawiki-recipe.sh``: ``maintenance/install.php`` into a fresh SQLite database under ``workdir``,
test-only lines appended to ``LocalSettings.php``, every export imported with ``maintenance/importDump.php``, then
``rebuildrecentchanges`` / ``initSiteStats --update`` / ``rebuildtextindex``, optional page moves with
``maintenance/moveBatch.php`` (a real move log entry and null revision, stamped with the machine clock), the job
queue run empty (``runJobs.php``), and ``php -S 127.0.0.1:PORT`` with a single worker by default (``workers=N``
sets ``PHP_CLI_SERVER_WORKERS=N`` for the server alone: N forked workers answering in parallel). Every PHP process finds
the wiki's configuration through the ``MW_CONFIG_FILE`` environment variable, so nothing is written under
``/usr/share/mediawiki`` or ``/etc``.

Packages (``.ci/run`` installs them): ``apt-get install --no-install-recommends mediawiki php-cli php-sqlite3``.

Usage::

    with LocalMediaWiki(tmp_path, [export_xml], moves=[PageMove("Old", "New", "reason")]) as wiki:
        requests.get(wiki.api_url, params={"action": "query", "meta": "siteinfo", "format": "json"})

or step by step: ``wiki.setup()``, ``wiki.move(...)``, ``wiki.start()``, ..., ``wiki.stop()``.
``importDump.php`` assigns new page and revision ids (the XML's are dropped): look them up with
:meth:`LocalMediaWiki.page_id`, :meth:`LocalMediaWiki.revision_id` or :meth:`LocalMediaWiki.revisions`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

MEDIAWIKI_DIR = Path("/usr/share/mediawiki")
INSTALL_HINT = (
    "install the Debian packages: apt-get install -y --no-install-recommends mediawiki php-cli php-sqlite3 "
    "(.ci/run does this)"
)
ADMIN_USER = "Admin"
ADMIN_PASSWORD = "Frozen-Search-Admin-Pass-1"
WIKI_NAME = "FrozenWiki"
DB_NAME = "frozenwiki"
# Appended to the generated LocalSettings.php, as in ../shared/mediawiki-recipe.sh.
TEST_SETTINGS = """
# --- test-only additions (frozen-search tests/wikipedia/mediawiki_server.py) ---
$wgShowExceptionDetails = true;
$wgEnableUploads = false;
$wgRateLimits = [];
$wgGroupPermissions['sysop']['deleterevision'] = true;
"""
# Root element put around a bare sequence of <page> elements (the pages-only sample; see SOURCES.md).
PAGES_ONLY_HEADER = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.6/" version="0.6" xml:lang="en">\n'
PAGES_ONLY_FOOTER = "\n</mediawiki>\n"
_PROLOG_JUNK = re.compile(rb"\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", re.S)
_FIRST_TAG = re.compile(rb"<([A-Za-z_][\w.:-]*)")


class MediaWikiUnavailable(RuntimeError):
    """php, the php extensions MediaWiki needs, or the mediawiki package are not installed on this machine."""


class MediaWikiError(RuntimeError):
    """A maintenance script failed, or the server did not come up."""


@dataclass(frozen=True)
class PageMove:
    """A page rename done with ``maintenance/moveBatch.php`` after the import (leaves a redirect unless told not to)."""

    old: str
    new: str
    reason: str
    redirect: bool = True


def find_php(php: str | None = None) -> str:
    """The php binary to use, or :class:`MediaWikiUnavailable` naming what is missing."""
    found = shutil.which(php or "php")
    if found is None:
        raise MediaWikiUnavailable(f"{php or 'php'} not found on PATH; {INSTALL_HINT}")
    return found


def check_installed(php: str | None = None, mediawiki_dir: Path = MEDIAWIKI_DIR) -> str:
    """Check php, its pdo_sqlite and intl extensions and MediaWiki are there; returns the php binary's path."""
    binary = find_php(php)
    if not (mediawiki_dir / "maintenance" / "install.php").is_file():
        raise MediaWikiUnavailable(f"MediaWiki not found at {mediawiki_dir}; {INSTALL_HINT}")
    probe = 'foreach (["pdo_sqlite", "intl", "mbstring", "xml"] as $e) { if (!extension_loaded($e)) echo "$e "; }'
    result = subprocess.run([binary, "-r", probe], capture_output=True, text=True, timeout=60, check=False)
    missing = result.stdout.split()
    if result.returncode != 0 or missing:
        raise MediaWikiUnavailable(
            f"php at {binary} lacks extension(s) {missing or '?'} ({result.stderr.strip()}); {INSTALL_HINT}"
        )
    return binary


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (bind port 0, read it, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def root_element(path: Path) -> str:
    """Local name of the first element of an XML file (``mediawiki`` for a normal export, ``page`` for pages-only)."""
    with path.open("rb") as handle:
        head = handle.read(65536).removeprefix(b"\xef\xbb\xbf")
    position = 0
    while match := _PROLOG_JUNK.match(head, position):
        position = match.end()
    tag = _FIRST_TAG.match(head, position)
    if tag is None:
        raise MediaWikiError(f"{path}: no XML element in its first 64 KiB")
    return tag.group(1).decode("ascii").rsplit(":", 1)[-1]


def importable_export(path: Path, workdir: Path) -> Path:
    """``path`` itself, or a copy under ``workdir`` wrapped in a ``<mediawiki>`` root when it is a bare page list."""
    root = root_element(path)
    if root == "mediawiki":
        return path
    if root != "page":
        raise MediaWikiError(f"{path}: root element <{root}> is neither <mediawiki> nor <page>")
    wrapped = workdir / "wrapped" / f"{path.stem}.wrapped.xml"
    wrapped.parent.mkdir(parents=True, exist_ok=True)
    with path.open("rb") as source, wrapped.open("wb") as target:
        target.write(PAGES_ONLY_HEADER.encode())
        head = source.read(4096).removeprefix(b"\xef\xbb\xbf")
        target.write(re.sub(rb"^\s*<\?xml[^>]*\?>", b"", head))  # an XML declaration may only open a document
        shutil.copyfileobj(source, target)
        target.write(PAGES_ONLY_FOOTER.encode())
    return wrapped


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


class LocalMediaWiki:
    """One throwaway MediaWiki on ``127.0.0.1:port`` whose database, config and logs live under ``workdir``.

    ``exports`` are imported in order. ``moves`` are done after the import (before serving) by :meth:`setup`,
    which then runs the job queue empty. ``workers`` > 1 makes ``php -S`` fork that many workers (the server only;
    maintenance scripts never see the variable); they share its process group, so :meth:`stop` ends them too.
    ``timings`` records seconds per step (``install``, ``import``, ``rebuild``, ``moves``, ``jobs``, ``serve``).
    """

    def __init__(
        self,
        workdir: Path,
        exports: Iterable[Path],
        *,
        moves: Sequence[PageMove] = (),
        php: str | None = None,
        mediawiki_dir: Path = MEDIAWIKI_DIR,
        port: int | None = None,
        startup_timeout: float = 60.0,
        script_timeout: float = 600.0,
        workers: int = 1,
        extensions: Sequence[str] = (),
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self.workdir = Path(workdir).resolve()
        self.exports = [Path(p).resolve() for p in exports]
        self.moves = list(moves)
        self.mediawiki_dir = mediawiki_dir
        self.php = check_installed(php, mediawiki_dir)
        self.port = port if port is not None else free_port()
        self.startup_timeout = startup_timeout
        self.script_timeout = script_timeout
        self.workers = workers
        self.extensions = list(extensions)
        self.config_file = self.workdir / "LocalSettings.php"
        self.timings: dict[str, float] = {}
        self._set_up = False
        self._server: subprocess.Popen[bytes] | None = None
        self._server_log: IO[bytes] | None = None
        for export in self.exports:
            if not export.is_file():
                raise FileNotFoundError(f"export not found: {export}")

    # ------------------------------------------------------------------ addresses
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the wiki's ``$wgServer``; ``$wgScriptPath`` is empty)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        """``http://127.0.0.1:PORT/api.php``."""
        return f"{self.base_url}/api.php"

    @property
    def server_pid(self) -> int | None:
        """PID of the ``php -S`` process (leader of its own process group) while it runs."""
        return self._server.pid if self.running and self._server is not None else None

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.poll() is None

    # ------------------------------------------------------------------ PHP processes
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PHP_CLI_SERVER_WORKERS"}  # one worker: see mediawiki.md
        env["MW_CONFIG_FILE"] = str(self.config_file)
        return env

    def _server_env(self) -> dict[str, str]:
        env = self._env()
        if self.workers > 1:
            env["PHP_CLI_SERVER_WORKERS"] = str(self.workers)
        return env

    def run_maintenance(self, script: str, *args: str, stdin: str | None = None) -> str:
        """Run ``php maintenance/SCRIPT ARGS`` against this wiki (``stdin``: text fed to it); its output is appended
        to ``maintenance.log``."""
        command = [self.php, f"maintenance/{script}", *args]
        started = time.monotonic()
        try:
            result = subprocess.run(
                command,
                cwd=self.mediawiki_dir,
                env=self._env(),
                capture_output=True,
                text=True,
                timeout=self.script_timeout,
                check=False,
                input=stdin,
            )
        except subprocess.TimeoutExpired as exc:
            raise MediaWikiError(f"{script} timed out after {self.script_timeout} s: {command}") from exc
        output = result.stdout + result.stderr
        with (self.workdir / "maintenance.log").open("a", encoding="utf-8") as log:
            log.write(f"$ {' '.join(command)}  # {time.monotonic() - started:.2f} s, exit {result.returncode}\n")
            log.write(output if output.endswith("\n") or not output else output + "\n")
        if result.returncode != 0:
            raise MediaWikiError(f"{script} failed (exit {result.returncode}): {command}\n{_tail(output)}")
        return result.stdout

    # ------------------------------------------------------------------ building the wiki
    def setup(self) -> None:
        """install.php, test settings, import every export, rebuild derived tables, then the moves. Once only."""
        if self._set_up:
            return
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.config_file.exists() or (self.workdir / "data").exists():
            raise MediaWikiError(f"{self.workdir} already holds a wiki: use a fresh directory (re-import duplicates)")
        (self.workdir / "data").mkdir()
        started = time.monotonic()
        self.run_maintenance(
            "install.php",
            "--quiet",
            "--dbtype=sqlite",
            f"--dbpath={self.workdir / 'data'}",
            f"--dbname={DB_NAME}",
            f"--server={self.base_url}",
            "--scriptpath=",
            f"--confpath={self.workdir}",
            "--lang=en",
            f"--pass={ADMIN_PASSWORD}",
            WIKI_NAME,
            ADMIN_USER,
        )
        if not self.config_file.is_file():
            raise MediaWikiError(f"install.php wrote no {self.config_file}; see {self.workdir / 'maintenance.log'}")
        with self.config_file.open("a", encoding="utf-8") as settings:
            settings.write(TEST_SETTINGS)
            for extension in self.extensions:  # e.g. ParserFunctions, Scribunto (the Debian package ships them)
                settings.write(f"wfLoadExtension({extension!r});\n")
        self.timings["install"] = time.monotonic() - started

        started = time.monotonic()
        for export in self.exports:
            self.import_export(export)
        self.timings["import"] = time.monotonic() - started

        started = time.monotonic()
        self.rebuild()
        self.timings["rebuild"] = time.monotonic() - started
        self._set_up = True

        started = time.monotonic()
        for page_move in self.moves:
            self.move(page_move.old, page_move.new, page_move.reason, redirect=page_move.redirect)
        self.timings["moves"] = time.monotonic() - started

        # Import and moves queue jobs (htmlCacheUpdate, recentChangesUpdate); run them now, so that API reads
        # made by the tests do not run them (and write to the database) at the end of some request.
        started = time.monotonic()
        self.run_maintenance("runJobs.php")
        self.timings["jobs"] = time.monotonic() - started

    def import_export(self, export: Path) -> None:
        """``importDump.php`` one export file (a pages-only file is wrapped in a ``<mediawiki>`` root first)."""
        self.run_maintenance("importDump.php", "--quiet", str(importable_export(Path(export), self.workdir)))

    def rebuild(self) -> None:
        """Recent changes, site statistics and the search index, as the recipe does after importing."""
        self.run_maintenance("rebuildrecentchanges.php")
        self.run_maintenance("initSiteStats.php", "--update")
        self.run_maintenance("rebuildtextindex.php")

    def move(self, old: str, new: str, reason: str, *, redirect: bool = True, user: str | None = None) -> None:
        """Rename ``old`` to ``new`` with ``moveBatch.php``: a real move log entry and a null revision on ``new``,
        both stamped with the machine clock; a redirect is left at ``old`` unless ``redirect`` is false.

        ``user`` must exist on the wiki (``Admin`` does); by default MediaWiki's system user "Move page script".
        """
        self.setup()
        if "|" in old + new or "\n" in old + new:
            raise ValueError(f"title with '|' or newline: {old!r} -> {new!r}")
        listing = self.workdir / f"move-{len(list(self.workdir.glob('move-*.txt'))) + 1}.txt"
        listing.write_text(f"{old}|{new}\n", encoding="utf-8")
        args = [f"--r={reason}"]
        if user is not None:
            args.append(f"--u={user}")
        if not redirect:
            args.append("--noredirects")
        output = self.run_maintenance("moveBatch.php", *args, str(listing))
        if "FAILED" in output or "-->" not in output:
            raise MediaWikiError(f"moveBatch.php could not move {old!r} to {new!r}: {_tail(output)}")

    def delete(self, title: str, reason: str) -> None:
        """Delete ``title`` with ``deleteBatch.php`` (a real ``delete/delete`` log entry stamped with the clock)."""
        self.setup()
        listing = self.workdir / f"delete-{len(list(self.workdir.glob('delete-*.txt'))) + 1}.txt"
        listing.write_text(f"{title}\n", encoding="utf-8")
        self.run_maintenance("deleteBatch.php", "--r", reason, str(listing))

    def undelete(self, title: str, reason: str) -> None:
        """Restore every deleted revision of ``title`` with ``undelete.php`` (a ``delete/restore`` log entry)."""
        self.setup()
        self.run_maintenance("undelete.php", f"--reason={reason}", title)

    def edit(self, title: str, text: str, summary: str) -> None:
        """Save ``text`` as a new revision of ``title`` with ``edit.php`` (stamped with the machine clock)."""
        self.setup()
        self.run_maintenance("edit.php", f"--summary={summary}", f"--user={ADMIN_USER}", title, stdin=text)

    def upload_import(self, export: Path, prefix: str = "imported") -> dict[str, Any]:
        """Import ``export`` as Special:Import does (``action=import`` with an uploaded file, as ``Admin``): unlike
        ``importDump.php`` this writes an ``import/upload`` log entry and a null revision per page, stamped with the
        machine clock. The server must run. Returns the API's answer.

        Raises :class:`MediaWikiError` when login or import fails.
        """
        with self._admin_session() as (http, token), export.open("rb") as xml:
            answer: dict[str, Any] = http.post(self.api_url, data={
                "action": "import", "interwikiprefix": prefix, "token": token("csrf"), "format": "json",
                "formatversion": "2"}, files={"xml": (export.name, xml, "text/xml")}, timeout=120).json()
        if "error" in answer:
            raise MediaWikiError(f"action=import failed: {answer['error']}")
        return answer

    def merge_history(self, source: str, dest: str, timestamp: str, reason: str) -> dict[str, Any]:
        """Merge the revisions of ``source`` stamped up to ``timestamp`` (ISO 8601) into ``dest`` as
        Special:MergeHistory does (``action=mergehistory``, as ``Admin``): a ``merge/merge`` log entry stamped with
        the machine clock. The server must run. Returns the API's answer.

        Raises :class:`MediaWikiError` when login or the merge fails.
        """
        with self._admin_session() as (http, token):
            answer: dict[str, Any] = http.post(self.api_url, data={
                "action": "mergehistory", "from": source, "to": dest, "timestamp": timestamp, "reason": reason,
                "token": token("csrf"), "format": "json", "formatversion": "2"}, timeout=120).json()
        if "error" in answer:
            raise MediaWikiError(f"action=mergehistory failed: {answer['error']}")
        return answer

    def hide_revisions(self, revids: list[int], hide: str) -> dict[str, Any]:
        """Revision deletion as Special:RevisionDelete does it (``action=revisiondelete``, ``type=revision``, as
        ``Admin``): ``hide`` is ``content``, ``comment`` and/or ``user`` joined by ``|``; a ``delete/revision`` log
        entry stamped with the machine clock. The server must run. Returns the API's answer.

        Raises :class:`MediaWikiError` when login or the deletion fails.
        """
        with self._admin_session() as (http, token):
            answer: dict[str, Any] = http.post(self.api_url, data={
                "action": "revisiondelete", "type": "revision", "ids": "|".join(map(str, revids)), "hide": hide,
                "reason": "audit", "token": token("csrf"), "format": "json", "formatversion": "2"},
                timeout=120).json()
        if "error" in answer:
            raise MediaWikiError(f"action=revisiondelete failed: {answer['error']}")
        return answer

    @contextlib.contextmanager
    def _admin_session(self) -> Iterator[tuple[Any, Callable[[str], str]]]:
        """A ``requests`` session logged in as ``Admin`` (``action=clientlogin``) and a ``token(kind)`` reader.

        Raises :class:`MediaWikiError` when login fails.
        """
        import requests

        with requests.Session() as http:
            def token(kind: str) -> str:
                answer = http.get(self.api_url, params={"action": "query", "meta": "tokens", "type": kind,
                                                        "format": "json", "formatversion": "2"}, timeout=60).json()
                return str(answer["query"]["tokens"][f"{kind}token"])

            login = http.post(self.api_url, data={
                "action": "clientlogin", "username": ADMIN_USER, "password": ADMIN_PASSWORD,
                "logintoken": token("login"), "loginreturnurl": self.base_url + "/", "format": "json",
                "formatversion": "2"}, timeout=60).json()
            if login.get("clientlogin", {}).get("status") != "PASS":
                raise MediaWikiError(f"clientlogin failed: {login}")
            yield http, token

    # ------------------------------------------------------------------ serving
    def start(self) -> None:
        """Set up (if not yet done) and serve on 127.0.0.1:port; returns once api.php answers."""
        if self.running:
            return
        self.setup()
        started = time.monotonic()
        self._server_log = (self.workdir / "server.log").open("ab")
        self._server = subprocess.Popen(
            [self.php, "-S", f"127.0.0.1:{self.port}", "-t", str(self.mediawiki_dir)],
            cwd=self.mediawiki_dir,
            env=self._server_env(),
            stdin=subprocess.DEVNULL,
            stdout=self._server_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() kills the server and anything it forked
        )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        self.timings["serve"] = time.monotonic() - started

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.api_url}?action=query&meta=siteinfo&format=json"
        last_error = ""
        while time.monotonic() < deadline:
            assert self._server is not None
            if self._server.poll() is not None:
                log = (self.workdir / "server.log").read_text(encoding="utf-8", errors="replace")
                raise MediaWikiError(f"php -S exited with {self._server.returncode}: {_tail(log)}")
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if "query" in json.loads(response.read()):
                        return
            except (OSError, ValueError) as exc:
                last_error = repr(exc)
            time.sleep(0.1)
        raise MediaWikiError(f"api.php did not answer within {self.startup_timeout} s at {url}: {last_error}")

    def stop(self) -> None:
        """Stop the server and its whole process group; idempotent."""
        server, self._server = self._server, None
        if server is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
            # anything the server forked lives on in its process group after the leader exits: none may be left
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
        if self._server_log is not None:
            self._server_log.close()
            self._server_log = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ looking things up (stdlib HTTP only)
    def api(self, **params: str | int) -> Any:
        """GET api.php with ``params`` (plus ``format=json&formatversion=2``); the decoded JSON.

        Raises :class:`MediaWikiError` when the answer carries an ``error``.
        """
        query = {"format": "json", "formatversion": "2", **{k: str(v) for k, v in params.items()}}
        url = f"{self.api_url}?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(url, timeout=60) as response:
            data = json.loads(response.read())
        if "error" in data:
            raise MediaWikiError(f"API error for {query}: {data['error']}")
        return data

    def revisions(self, title: str) -> list[dict[str, Any]]:
        """Every revision of ``title``, oldest first: revid, parentid, timestamp, user, comment, size, sha1 (hex).

        Redirects are not followed. Empty when the page does not exist.
        """
        found: list[dict[str, Any]] = []
        extra: dict[str, str | int] = {}
        while True:
            data = self.api(
                action="query",
                prop="revisions",
                titles=title,
                rvprop="ids|timestamp|user|comment|size|sha1|flags",
                rvdir="newer",
                rvlimit="max",
                **extra,
            )
            page = data["query"]["pages"][0]
            found.extend(page.get("revisions", []))
            if "continue" not in data:
                return found
            extra = {k: v for k, v in data["continue"].items() if k != "continue"}

    def page_id(self, title: str) -> int:
        """The local page id of ``title`` (importDump.php assigns new ids); :class:`KeyError` when missing."""
        page = self.api(action="query", titles=title)["query"]["pages"][0]
        if page.get("missing") or "pageid" not in page:
            raise KeyError(title)
        pageid: int = page["pageid"]
        return pageid

    def revision_id(self, title: str, timestamp: str) -> int:
        """The local revision id of ``title``'s revision stamped ``timestamp`` (``YYYY-MM-DDTHH:MM:SSZ``)."""
        matches = [r["revid"] for r in self.revisions(title) if r["timestamp"] == timestamp]
        if len(matches) != 1:
            raise KeyError(f"{title!r} has {len(matches)} revisions at {timestamp}")
        revid: int = matches[0]
        return revid
