"""Leak class 14 (an upstream that ignores its date filter) for the Stack Exchange API, with issue 11 item 3 for
Stack Exchange live (an answer merged in after T, a question migrated in after T, comments edited after T), through
every face. Cutoff 2016-01-01.

The stub API (tests/cross_source/test_http_layer.py's ``Stub``) answers the recorded real ``/posts/27379/revisions``
(codereview.stackexchange.com) plus items in the documented API 2.3 shapes (tests/stackexchange/test_se_live_moves.py):
``/search/advanced`` ignores ``todate`` and proposes a question asked after T; answer 27390 was merged into 27379
after T (a ``Post Merged (destination)`` state entry); comments posted a minute before T and edited (their text is
today's) carry markers. A second stub answers question 27379 as migrated in from Stack Overflow after T. Then the
same data dir offline with the stub still listening: served from the recorded cache, or ``offline_cache_miss``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cross_source.test_http_layer import FakeTime, Reply, Stub
from tests.leaks.harness import FACES, Answers, Case, Faces, offline_rerun, suite
from tests.stackexchange.test_se_live import EMPTY, JSON, SITE, question_item
from tests.stackexchange.test_se_live_moves import ANSWER, ANSWERS, LATER, _comment, _revisions

CUTOFF = "2016-01-01"
BOUND = 1451606400  # 2016-01-01T00:00:00Z
SOURCE = "codereview.stackexchange"
LATER_QUESTION = json.dumps({"items": [
    {"tags": ["c++"], "owner": {"user_type": "registered", "display_name": "someone"}, "is_answered": False,
     "view_count": 12, "answer_count": 0, "score": 1, "last_activity_date": LATER, "creation_date": LATER,
     "question_id": 27500, "content_license": "CC BY-SA 3.0",
     "link": f"https://{SITE}/questions/27500/deck-card-classes-postcutoff-marker-1",
     "title": "Deck and Card classes again POSTCUTOFF_MARKER_1"},
    {"tags": ["c++", "oop"], "owner": {"user_type": "registered", "display_name": "someone"}, "is_answered": True,
     "view_count": 4242, "answer_count": 3, "score": 17, "last_activity_date": LATER, "creation_date": 1371168505,
     "question_id": 27379, "content_license": "CC BY-SA 3.0",
     "link": f"https://{SITE}/questions/27379/deck-and-card-classes-and-member-accessing-with-one-header",
     "title": "Deck and Card classes and member-accessing with one header"}],
    "has_more": False, "quota_max": 10000, "quota_remaining": 8750}).encode()
COMMENTS = json.dumps({"items": [
    _comment(50001, BOUND - 60, True, "POSTCUTOFF_MARKER_2 edited a minute before"),
    _comment(50002, BOUND - 60, False, "Never edited, a minute before"),
    _comment(50003, BOUND - 301, True, "Edited within its window, which closed before T"),
    _comment(50004, BOUND - 120, None, "POSTCUTOFF_MARKER_3 no edited flag"),
    _comment(50005, LATER, False, "POSTCUTOFF_MARKER_4 posted after T")],
    "has_more": False, "quota_max": 10000, "quota_remaining": 8700}).encode()
CASES = [
    Case("search-ignoring-todate", "search", {"query": "Deck Card classes", "source": SOURCE},
         shown=(f"{SOURCE}:27379",)),
    Case("fetch-question-with-later-merge", "fetch", {"id": f"{SOURCE}:27379"},
         shown=("Deck and Card classes", "Never edited, a minute before", "Edited within its window")),
    Case("fetch-answer-merged-in-later", "fetch", {"id": f"https://{SITE}/a/27390"}),
    Case("fetch-unknown-answer", "fetch", {"id": f"https://{SITE}/a/27391"}),
    Case("fetch-question-asked-later", "fetch", {"id": f"{SOURCE}:27500"}),
]
MIGRATED = [Case("fetch-question-migrated-in-later", "fetch", {"id": f"{SOURCE}:27379"}),
            Case("fetch-unknown-question", "fetch", {"id": f"{SOURCE}:27380"}),
            Case("search-upstream-broken-after-a-later-hit", "search",
                 {"query": "Deck Card classes", "source": SOURCE})]
MISSES = [Case("fetch-never-asked", "fetch", {"id": f"{SOURCE}:27381"}),
          Case("search-never-asked", "search", {"query": "iterator invalidation", "source": SOURCE})]
FORBIDDEN = ("27390", "27500", "zanzibarite", "1456826400", "Merged (destination)", "questions/400", "stackoverflow",
             "Stack Overflow", "4242", "17")


class Script(dict[str, list[Reply]]):
    """The stub's script; a batch path (``/posts/27500;27379/revisions``) not scripted as such answers as the path
    of its scripted ids (the ids that have no post answer nothing, as the API leaves them out), else empty."""

    broken_batches = False

    def get(self, path: str, default: object = None) -> list[Reply]:  # type: ignore[override]
        if path in self:
            return self[path]
        parts = path.split("/")
        if len(parts) > 3 and ";" in parts[3]:
            if self.broken_batches:
                return [Reply()]  # {"ok": true}: JSON without an items list
            kept = ";".join(i for i in parts[3].split(";") if i in ("27379", "27390"))
            return self.get("/".join([*parts[:3], kept, *parts[4:]])) if kept else [Reply(body=EMPTY, headers=JSON)]
        return [Reply(body=EMPTY, headers=JSON)]


def _script(stub: Stub, migrated: bool) -> None:
    stub.script = Script()
    stub.script.broken_batches = migrated
    revisions = Reply(body=_revisions("question", LATER), headers=JSON)
    for path in ("/2.3/posts/27379;27390/revisions", "/2.3/posts/27379/revisions"):
        stub.script[path] = [revisions]
    stub.script["/2.3/questions/27379/answers"] = [Reply(body=ANSWERS, headers=JSON)]
    for path in ("/2.3/posts/27379;27390/comments", "/2.3/posts/27379/comments"):
        stub.script[path] = [Reply(body=COMMENTS, headers=JSON)]
    migration = {"on_date": LATER, "question_id": 400,
                 "other_site": {"site_url": "https://stackoverflow.com", "api_site_parameter": "stackoverflow"}}
    stub.script["/2.3/questions/27379"] = [Reply(body=question_item(27379, migration if migrated else None),
                                                 headers=JSON)]
    stub.script["/2.3/answers/27390"] = [Reply(body=ANSWER, headers=JSON)]
    stub.script["/2.3/search/advanced"] = [Reply(body=LATER_QUESTION, headers=JSON)]
    for number in (27380, 27381, 27391, 27500):
        for path in (f"/2.3/posts/{number}/revisions", f"/2.3/questions/{number}/answers",
                     f"/2.3/posts/{number}/comments", f"/2.3/questions/{number}", f"/2.3/answers/{number}"):
            stub.script[path] = [Reply(body=EMPTY, headers=JSON)]


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    api = Stub(FakeTime())
    _script(api, migrated=False)
    yield api
    api.close()


def _settings(stub: Stub, mode: str) -> dict[str, str]:
    return {"mode": mode, "live_sources": "stackexchange", "stackexchange_api": stub.url("/2.3"),
            "stackexchange_sites": f"mathoverflow.net,{SITE}"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("c14-se")


@pytest.fixture(scope="module")
def answers(stub: Stub, root: Path) -> Answers:
    return Faces(root / "data", CUTOFF, root / "logs", _settings(stub, "live")).run(CASES)


@pytest.fixture(scope="module")
def offline(answers: Answers, stub: Stub, root: Path) -> Answers:
    return offline_rerun(root, CUTOFF, _settings(stub, "offline"), CASES + MISSES, stub.seen)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answers]:
    api = Stub(FakeTime())
    _script(api, migrated=True)
    root = tmp_path_factory.mktemp("c14-se-migrated")
    yield Faces(root / "data", CUTOFF, root / "logs", _settings(api, "live")).run(MIGRATED)
    api.close()


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)
test_offline_no_leak, test_offline_shown, test_offline_audit = suite(CASES + MISSES, FORBIDDEN, fixture="offline")
test_migrated_no_leak, test_migrated_shown, test_migrated_audit = suite(MIGRATED, FORBIDDEN, fixture="migrated")


def test_the_search_window_was_sent_and_ignored(answers: Answers, stub: Stub) -> None:
    searched = [seen.path for seen in stub.seen if "/search/advanced" in seen.path]
    assert searched and all(f"todate={BOUND - 1}" in path for path in searched)


@pytest.mark.parametrize(("fixture", "name", "unknown", "given", "other"), [
    ("answers", "fetch-answer-merged-in-later", "fetch-unknown-answer", b"27390", b"27391"),
    ("answers", "fetch-question-asked-later", "fetch-unknown-answer", f"{SOURCE}:27500".encode(),
     f"https://{SITE}/a/27391".encode()),
    ("migrated", "fetch-question-migrated-in-later", "fetch-unknown-question", b"27379", b"27380"),
])
def test_no_state_at_t_answers_exactly_like_an_unknown_id(request: pytest.FixtureRequest, fixture: str, name: str,
                                                          unknown: str, given: bytes, other: bytes) -> None:
    got_all: Answers = request.getfixturevalue(fixture)
    for face in FACES:
        got, never = got_all.by_case[name][face], got_all.by_case[unknown][face]
        assert got.code == never.code == "not_found_before_cutoff", (face, got.raw[:400])
        if face != "http":  # the HTTP body carries a fresh request id
            assert got.raw.replace(given, b"ID") == never.raw.replace(other, b"ID"), face


def test_offline_answers_from_the_recorded_cache_and_never_asks(answers: Answers, offline: Answers) -> None:
    assert offline.asked == []  # type: ignore[attr-defined]
    assert offline.outbound == {face: [] for face in FACES} == answers.outbound
    for case in CASES:
        for face in FACES:
            live, again = answers.get(case, face), offline.get(case, face)
            assert (live.code, live.response is None) == (again.code, again.response is None), (case.name, face)
            if live.response is not None and case.tool == "fetch":
                assert live.response["text"] == again.response["text"], (case.name, face)  # type: ignore[index]
    for case in MISSES:
        for face in FACES:
            assert offline.get(case, face).code == "offline_cache_miss", (face, offline.get(case, face).raw[:400])
