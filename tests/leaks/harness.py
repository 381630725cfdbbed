"""The leak suite's harness: one call through every real face, the raw bytes each face gave, and a scanner.

Faces (issue 11, item 5):

- ``cli``: ``click.testing.CliRunner`` on :func:`frozen_search.cli.main` (``search``/``fetch`` with ``--cutoff`` and
  ``--data-dir``); the bytes are stdout + stderr, and a traceback (any exception but ``SystemExit``) is a crash.
- ``http``: :func:`frozen_search.server.http.create_app` through Starlette's ``TestClient`` (``POST /v1/search`` and
  ``POST /v1/fetch`` with a JSON body; server exceptions are not re-raised, so a bug is the 500 a caller would get);
  the bytes are the status line, every header and the body.
- ``mcp``: ``python -m frozen_search mcp`` as a subprocess, driven over stdio by the official ``mcp`` SDK client;
  one subprocess per :meth:`Faces.run` (all of a module's calls go through it); the bytes are the whole
  ``CallToolResult`` as JSON (content blocks, structured content, ``isError``).

Each face logs to its own query log (``<log_dir>/<face>.jsonl``: one hash chain per writer), which
:meth:`Answers.audit_failures` checks with :func:`frozen_search.querylog.audit`.

Live and offline faces: ``Faces(..., settings={"mode": "live", "arxiv_api": stub_url, ...})`` builds every face on
those settings (the CLI and the MCP server read them as ``FROZEN_SEARCH_*`` environment variables, the HTTP face from
:meth:`Settings.from_env` on the same variables), so each face asks the local stubs. Every socket a face opens to
a host that is not the loopback is recorded in :attr:`Answers.outbound` (a ``socket.connect``/``socket.getaddrinfo``
audit hook: in this process for the CLI and HTTP faces, through a ``sitecustomize`` on the MCP subprocess'
``PYTHONPATH``): "no network call" is checked on every face, not only on the stubs' request lists.

:func:`leaks_in` is the scanner: a planted ``POSTCUTOFF_MARKER_<n>``, any string a module forbids (post-``T`` titles,
ids), any date or instant at or after the cutoff (a day-only date counts when its day ends after ``T``), less what
the caller itself sent and the cutoff the answer announces. A crash (traceback, HTTP 500, MCP ``[internal]``) is a
failure too: it is what hostile input must never cause.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from starlette.testclient import TestClient

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.cutoff import iso_utc, parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.ops.data_dir import open_service
from frozen_search.querylog import audit, read_log
from frozen_search.server.http import create_app
from frozen_search.service import FrozenSearchService

REPO = Path(__file__).resolve().parents[2]
FACES = ("cli", "http", "mcp")
MARKER = re.compile(r"POSTCUTOFF_MARKER_\d+")
_INSTANT = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(?!\d)")


@dataclass(frozen=True)
class Case:
    """One call of a leak module: ``tool`` (``search``/``fetch``) with ``args``; ``shown``: the over-refusal check
    (the call must succeed on every face, and for a search, these ids must be among the hits; for a fetch, these
    strings must be in the text); ``known_leak`` / ``known_refusal``: the strict-xfail reason ("<issue item>: <what
    leaks today>") of the no-leak test / of the over-refusal test."""

    name: str
    tool: str
    args: Mapping[str, Any]
    shown: tuple[str, ...] | None = None
    known_leak: str | None = None
    known_refusal: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the call in a query log line: the tool and its id or query."""
        return self.tool, str(self.args.get("id", self.args.get("query")))


@dataclass(frozen=True)
class Answer:
    """What one face gave for one call: its raw bytes, its JSON (the response, or ``None`` on a refusal), the
    refusal's code, and whether it crashed."""

    face: str
    raw: bytes
    response: dict[str, Any] | None
    code: str | None
    crashed: bool


@dataclass
class Answers:
    """Every face's :class:`Answer` per case name, and the logs they wrote."""

    cutoff: str
    by_case: dict[str, dict[str, Answer]] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)
    cases: dict[str, Case] = field(default_factory=dict)
    outbound: dict[str, list[str]] = field(default_factory=dict)  # per face: non-loopback hosts it tried to reach

    def get(self, case: Case, face: str) -> Answer:
        return self.by_case[case.name][face]

    def audit_failures(self) -> list[str]:
        """Every failure of ``audit`` on each face's log, less disclosures on lines of known-leak calls."""
        known = {case.key for case in self.cases.values() if case.known_leak}
        failures = []
        for face, path in self.logs.items():
            if not path.exists():
                failures.append(f"{face}: no query log at {path}")
                continue
            keys = {}
            for number, record in read_log(path):
                arguments = record.get("arguments") or {}
                keys[number] = (record.get("tool"), str(arguments.get("id", arguments.get("query"))))
            report = audit(path)
            failures += [f"{face}: chain break line {b.line}: {b.kind}" for b in report.chain_breaks]
            failures += [f"{face}: late hit line {h.line}: {h.id}" for h in report.late_hits
                         if keys.get(h.line) not in known]
            failures += [f"{face}: disclosure line {d.line} {keys.get(d.line)}: {d.what}" for d in report.disclosures
                         if keys.get(d.line) not in known]
        return failures


def observed_calls(service: FrozenSearchService, queries: Iterable[str], refs: Iterable[str], *,
                   masked: bool = False) -> dict[str, str]:
    """What a caller observes of each ``search`` of ``queries`` and ``fetch`` of ``refs`` through ``service``: the
    answer's JSON text, or the error as its face renders it (``[code] sentence``), keyed ``search <query>`` /
    ``fetch <ref>``. ``masked``: the ref in an error's sentence reads ``ID``, so refs that never existed compare
    alike. The twin-store tests compare these dicts between worlds that differ only after ``T``."""
    seen: dict[str, str] = {}
    for query in queries:
        try:
            seen[f"search {query}"] = service.search(query).model_dump_json()
        except FrozenSearchError as exc:
            seen[f"search {query}"] = str(exc)
    for ref in refs:
        try:
            seen[f"fetch {ref}"] = service.fetch(ref).model_dump_json()
        except FrozenSearchError as exc:
            seen[f"fetch {ref}"] = str(exc).replace(ref, "ID") if masked else str(exc)
    return seen


def observed_live_wikipedia(data: Path, api_url: str, cutoff: str, queries: Iterable[str],
                            refs: Iterable[str]) -> dict[str, str]:
    """:func:`observed_calls` through a live-mode service over a fresh data dir ``data`` (made here), asking only
    the MediaWiki Action API at ``api_url`` (a local MediaWiki of the twin-wiki audits) at ``cutoff``."""
    data.mkdir()
    service = FrozenSearchService.open(Settings.from_env(
        {}, data_dir=data, cutoff=parse_cutoff(cutoff), mode="live", wikipedia_api=api_url,
        live_sources="wikipedia"))
    try:
        return observed_calls(service, queries, refs)
    finally:
        service.close()


def leaks_in(raw: bytes, cutoff: str, given: Iterable[str] = (), forbidden: Iterable[str] = ()) -> list[str]:
    """Every post-cutoff fact found in ``raw``: planted markers, ``forbidden`` strings, dates/instants at or after
    ``cutoff`` (ISO 8601; a day-only date when its day ends after the cutoff); ``given`` (the caller's own
    arguments) and the cutoff's own ISO form are removed first."""
    text = raw.decode("utf-8", errors="replace")
    bound = parse_cutoff(cutoff)
    for value in sorted({iso_utc(bound), *given}, key=len, reverse=True):
        if value:
            text = text.replace(value, " ")
            text = text.replace(json.dumps(value)[1:-1], " ")
    found = [m.group(0) for m in MARKER.finditer(text)]
    # a forbidden value counts as a token of its own (``140`` is not the ``140`` inside a random request id)
    found += [value for value in forbidden
              if value and re.search(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])", text)]
    for m in _INSTANT.finditer(text):
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
        try:
            start = datetime(year, month, day, tzinfo=UTC)
        except ValueError:
            continue
        if m.group(4) is None:
            late = start + timedelta(days=1) > bound
        else:
            micro = int((m.group(7) or "0").ljust(6, "0"))
            late = start + timedelta(hours=int(m.group(4)), minutes=int(m.group(5)), seconds=int(m.group(6) or 0),
                                     microseconds=micro) >= bound
        if late:
            found.append(m.group(0))
    return found


def _given(args: Mapping[str, Any]) -> list[str]:
    return [str(value) for value in args.values() if value is not None]


def check_no_leak(answers: Answers, case: Case, face: str, forbidden: Sequence[str] = ()) -> None:
    """Fail naming the face, the call and what leaked (or that the face crashed)."""
    answer = answers.get(case, face)
    assert not answer.crashed, f"{face} crashed on {case.tool} {dict(case.args)}: {answer.raw[-600:]!r}"
    found = leaks_in(answer.raw, answers.cutoff, _given(case.args), forbidden)
    assert not found, f"{face} leaked {found} on {case.tool} {dict(case.args)}: {answer.raw[:1500]!r}"


def check_shown(answers: Answers, case: Case, face: str) -> None:
    """The over-refusal check: what was public before T is shown on ``face``."""
    answer = answers.get(case, face)
    assert answer.response is not None, f"{face} refused {case.tool} {dict(case.args)}: {answer.raw[:600]!r}"
    assert case.shown is not None
    if case.tool == "search":
        ids = [hit["id"] for hit in answer.response["results"]]
        missing = [wanted for wanted in case.shown if wanted not in ids]
        assert not missing, f"{face}: {missing} not among the hits {ids} of {dict(case.args)}"
    else:
        missing = [wanted for wanted in case.shown if wanted not in json.dumps(answer.response, ensure_ascii=False)]
        assert not missing, f"{face}: {missing} not in fetch {dict(case.args)}: {answer.raw[:800]!r}"


def leak_params(cases: Sequence[Case]) -> list[Any]:
    """``pytest.param(case, face)`` for every case and face; a known leak is a strict xfail with its reason."""
    return [pytest.param(case, face, id=f"{case.name}-{face}",
                         marks=[pytest.mark.xfail(strict=True, reason=case.known_leak)] if case.known_leak else [])
            for case in cases for face in FACES]


def shown_params(cases: Sequence[Case]) -> list[Any]:
    """``pytest.param(case, face)`` for every over-refusal case (``shown`` set) and face."""
    return [pytest.param(case, face, id=f"{case.name}-{face}",
                         marks=[pytest.mark.xfail(strict=True, reason=case.known_refusal)]
                         if case.known_refusal else [])
            for case in cases if case.shown is not None for face in FACES]


def suite(cases: Sequence[Case], forbidden: Sequence[str] = (), fixture: str = "answers") -> tuple[Any, Any, Any]:
    """The three standard tests of a leak module (each takes the module's ``fixture``, an :class:`Answers`): no
    post-cutoff byte on any face for any case, what was public before T shown (``Case.shown``), and the faces' query
    logs pass ``audit``. Use: ``test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)`` (``test_shown`` is
    ``None``, so not collected, when no case has ``shown``)."""

    @pytest.mark.parametrize(("case", "face"), leak_params(cases))
    def test_no_post_cutoff_byte(request: pytest.FixtureRequest, case: Case, face: str) -> None:
        check_no_leak(request.getfixturevalue(fixture), case, face, forbidden)

    @pytest.mark.parametrize(("case", "face"), shown_params(cases))
    def test_what_was_public_before_t_is_shown(request: pytest.FixtureRequest, case: Case, face: str) -> None:
        check_shown(request.getfixturevalue(fixture), case, face)

    def test_the_query_logs_pass_the_audit(request: pytest.FixtureRequest) -> None:
        assert request.getfixturevalue(fixture).audit_failures() == []

    shown = test_what_was_public_before_t_is_shown if any(case.shown is not None for case in cases) else None
    return test_no_post_cutoff_byte, shown, test_the_query_logs_pass_the_audit


_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost", "", None})
_WATCHED: list[str] | None = None  # while a CLI/HTTP call runs: the non-loopback hosts its sockets tried


def _network_hook(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHED is None:
        return
    if event == "socket.connect" and isinstance(args[1], tuple) and args[1][0] not in _LOOPBACK:
        _WATCHED.append(f"connect {args[1][0]}:{args[1][1]}")
    elif event == "socket.getaddrinfo" and args[0] not in _LOOPBACK and args[0] != b"127.0.0.1":
        _WATCHED.append(f"getaddrinfo {args[0]!r}")


sys.addaudithook(_network_hook)  # one hook for the process (audit hooks cannot be removed); idle unless watching

_SITECUSTOMIZE = '''"""Test-only: record every non-loopback socket of this process (the leak suite's MCP face)."""
import os, sys
_PATH = os.environ.get("LEAKS_NETLOG")
_LOOP = {"127.0.0.1", "::1", "localhost", "", None, b"127.0.0.1", b"localhost"}
def _hook(event, args):
    host = args[1][0] if event == "socket.connect" and isinstance(args[1], tuple) else (
        args[0] if event == "socket.getaddrinfo" else None)
    if _PATH and event in ("socket.connect", "socket.getaddrinfo") and host not in _LOOP:
        with open(_PATH, "a", encoding="utf-8") as out:
            out.write(f"{event} {host!r}\\n")
sys.addaudithook(_hook)
'''


class Faces:
    """The three faces over one data dir at one cutoff. ``settings``: extra settings (``mode``, ``live_sources``,
    upstream URLs, ``stackexchange_sites``) as environment variables ``FROZEN_SEARCH_<NAME>``; a face on
    ``mode=live``/``offline`` settings asks the stubs they name. ``name`` tells apart the logs of several runs in
    one ``log_dir`` (``<log_dir>/<name><face>.jsonl``)."""

    def __init__(self, data_dir: Path, cutoff: str, log_dir: Path, settings: Mapping[str, str] | None = None,
                 name: str = "") -> None:
        self.data_dir, self.cutoff, self.log_dir, self.name = data_dir, cutoff, log_dir, name
        self.settings = dict(settings or {})
        log_dir.mkdir(parents=True, exist_ok=True)
        self._netwatch = log_dir / "netwatch"
        self._netwatch.mkdir(exist_ok=True)
        (self._netwatch / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")

    def env(self, face: str) -> dict[str, str]:
        env = {f"FROZEN_SEARCH_{name.upper()}": value for name, value in self.settings.items()}
        env.update(FROZEN_SEARCH_DATA_DIR=str(self.data_dir), FROZEN_SEARCH_CUTOFF=self.cutoff,
                   FROZEN_SEARCH_LOG=str(self.log_dir / f"{self.name}{face}.jsonl"))
        return env

    def run(self, cases: Sequence[Case]) -> Answers:
        """Every case through every face; one MCP subprocess for all of them."""
        global _WATCHED
        answers = Answers(iso_utc(parse_cutoff(self.cutoff)),
                          logs={face: self.log_dir / f"{self.name}{face}.jsonl" for face in FACES},
                          cases={case.name: case for case in cases},
                          outbound={face: [] for face in FACES})
        netlog = self.log_dir / f"{self.name}mcp.netlog"
        netlog.unlink(missing_ok=True)
        for case in cases:
            answers.by_case[case.name] = {}
            for face, call in (("cli", self._cli), ("http", self._http)):
                _WATCHED = answers.outbound[face]
                try:
                    answers.by_case[case.name][face] = call(case)
                finally:
                    _WATCHED = None
        for case, answer in zip(cases, anyio.run(self._mcp, cases, netlog), strict=True):
            answers.by_case[case.name]["mcp"] = answer
        if netlog.exists():
            answers.outbound["mcp"] = netlog.read_text(encoding="utf-8").splitlines()
        return answers

    def _cli(self, case: Case) -> Answer:
        args = [case.tool, str(case.args["id" if case.tool == "fetch" else "query"]), "--cutoff", self.cutoff,
                "--data-dir", str(self.data_dir)]
        for name, value in case.args.items():
            if name not in ("id", "query") and value is not None:
                args += [f"--{name.replace('_', '-')}", str(value)]
        result = CliRunner().invoke(main, args, env=self.env("cli"))
        raw = result.stdout_bytes + result.stderr_bytes
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        if crashed:
            raw += repr(result.exception).encode()
        response = json.loads(result.stdout) if result.exit_code == 0 and not crashed else None
        code = re.match(r"\[([a-z_]+)\]", result.stderr or "")
        return Answer("cli", raw, response, code.group(1) if code else None, crashed)

    def _http(self, case: Case) -> Answer:
        settings = Settings.from_env(self.env("http"))
        service = open_service(settings)
        try:
            client = TestClient(create_app(service), raise_server_exceptions=False)
            reply = client.post(f"/v1/{case.tool}", json=dict(case.args))
        finally:
            service.close()
        head = f"HTTP {reply.status_code}\n" + "".join(f"{k}: {v}\n" for k, v in reply.headers.items())
        raw = head.encode() + b"\n" + reply.content
        body = reply.json() if reply.content else None
        ok = reply.status_code == 200
        return Answer("http", raw, body if ok else None, None if ok else (body or {}).get("code"),
                      reply.status_code >= 500 and (body or {}).get("code") == "internal")

    async def _mcp(self, cases: Sequence[Case], netlog: Path) -> list[Answer]:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", str(self.log_dir)),
               "PYTHONPATH": str(self._netwatch), "LEAKS_NETLOG": str(netlog), **self.env("mcp")}
        parameters = StdioServerParameters(command=sys.executable, args=["-m", "frozen_search", "mcp"], env=env,
                                           cwd=REPO)
        out = []
        async with Client(parameters) as client:
            for case in cases:
                result = await client.call_tool(case.tool, dict(case.args))
                raw = result.model_dump_json(by_alias=True).encode()
                text = result.content[0].text if result.content and result.content[0].type == "text" else ""
                code = re.match(r"\[([a-z_]+)\]", text)
                out.append(Answer("mcp", raw, None if result.is_error else result.structured_content,
                                  code.group(1) if result.is_error and code else None,
                                  text.startswith("[internal]")))
        return out


def offline_rerun(root: Path, cutoff: str, settings: Mapping[str, str], cases: Sequence[Case],
                  seen: list[str]) -> Answers:
    """The calls ``cases`` again on the data dir and logs under ``root``, in the offline mode of ``settings``, after
    a live run there; ``asked`` on the result lists what the stub (whose requests are ``seen``) received meanwhile
    (nothing, if offline mode never goes upstream)."""
    before = len(seen)
    got = Faces(root / "data", cutoff, root / "logs", settings, name="offline-").run(cases)
    got.asked = seen[before:]  # type: ignore[attr-defined]
    return got
