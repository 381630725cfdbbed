"""Leak class 11 (edits, answers, comments, closures and merges after T in an as-of view) on a crafted MathOverflow
dump, with issue 11 item 1 (a merge or migration after T told by a refusal), item 2 (millisecond instants) and item 3
(a thread merged after T shows its own pre-T content, with no word of the merge).

Question 100: created 2025-11-01, body edited 2026-02-01 (cites arXiv:2602.01234), answer 102 posted 2026-01-20,
comments 2025-12-01 and 2026-01-10, closed 2026-03-01; answer 103 posted 0.6 s before T, answer 104 deleted 0.3 s
before T. Question 200: merged into on 2026-03-05 (answer 201 came from elsewhere). Question 300: migrated here on
2026-02-10."""

from __future__ import annotations

import pytest

from tests.leaks.formats import ingested, stackexchange_dump
from tests.leaks.harness import FACES, Answers, Case, Faces, suite

CUTOFF = "2026-01-06"
LIC = "CC BY-SA 4.0"
CASES = [
    Case("fetch-q100", "fetch", {"id": "mathoverflow:100"}, shown=("Pellworth bound", "first comment")),
    Case("fetch-a102", "fetch", {"id": "mathoverflow:a/102"}),
    Case("search-later-edit", "search", {"query": "Pellworth solved"}),
    Case("search", "search", {"query": "Pellworth bound"}, shown=("mathoverflow:100",)),
    Case("fetch-a103-ms", "fetch", {"id": "mathoverflow:a/103"}, shown=("answered just in time",)),  # 0.6 s before T
    Case("fetch-q200-merged-later", "fetch", {"id": "mathoverflow:200"}, shown=("Corvane lattice",)),
    Case("fetch-a201-merged-in", "fetch", {"id": "mathoverflow:a/201"}),
    Case("fetch-q300-migrated-later", "fetch", {"id": "mathoverflow:300"}),
    Case("fetch-unknown", "fetch", {"id": "mathoverflow:999"}),
]
FORBIDDEN = ("2602.01234", "Tidewell", "closed as", "Closed", "duplicate", "merged", "migrated", "Score", "score",
             "too late comment", "Mirelle")


def _q(pid: int, created: str, title: str, body: str) -> list[dict[str, object]]:
    guid = f"00000000-0000-4000-8000-{pid:012d}"
    base = {"PostId": pid, "RevisionGUID": guid, "CreationDate": created, "UserId": 7}
    return [{"Id": pid * 10 + 1, "PostHistoryTypeId": 2, **base, "Text": body, "ContentLicense": LIC},
            {"Id": pid * 10 + 2, "PostHistoryTypeId": 1, **base, "Text": title, "ContentLicense": LIC},
            {"Id": pid * 10 + 3, "PostHistoryTypeId": 3, **base, "Text": "<nt.number-theory>",
             "ContentLicense": LIC}]


def _a(pid: int, created: str, body: str) -> dict[str, object]:
    return {"Id": pid * 10 + 1, "PostHistoryTypeId": 2, "PostId": pid,
            "RevisionGUID": f"00000000-0000-4000-8000-{pid:012d}", "CreationDate": created, "UserId": 8,
            "Text": body, "ContentLicense": LIC}


def _post(pid: int, created: str, body: str, parent: int | None = None, title: str | None = None) -> dict[str, object]:
    return {"Id": pid, "PostTypeId": 2 if parent else 1, "ParentId": parent, "CreationDate": created, "Score": 140,
            "ViewCount": None if parent else 9000, "Body": body, "OwnerUserId": 7, "LastActivityDate":
            "2026-03-05T10:00:00.000", "Title": title, "Tags": None if parent else "<nt.number-theory>",
            "AnswerCount": None if parent else 3, "CommentCount": 0, "ContentLicense": LIC}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    root = tmp_path_factory.mktemp("c11")
    later = "<p>POSTCUTOFF_MARKER_1 Today's body: solved in arXiv:2602.01234 by Tidewell.</p>"
    posts = [
        _post(100, "2025-11-01T10:00:00.123", later, title="The Pellworth bound POSTCUTOFF_MARKER_2"),
        _post(102, "2026-01-20T10:00:00.000", "<p>POSTCUTOFF_MARKER_3 Mirelle answer</p>", parent=100),
        _post(103, "2026-01-05T23:59:59.400", "<p>answered just in time</p>", parent=100),
        _post(200, "2025-10-01T10:00:00.000", "<p>Corvane lattice POSTCUTOFF_MARKER_4</p>", title="Corvane lattice"),
        _post(201, "2025-12-10T10:00:00.000", "<p>merged answer POSTCUTOFF_MARKER_5</p>", parent=200),
        _post(300, "2025-06-01T10:00:00.000", "<p>Quenby migrated POSTCUTOFF_MARKER_6</p>", title="Quenby problem"),
    ]
    history = [
        *_q(100, "2025-11-01T10:00:00.123", "The Pellworth bound", "Is the Pellworth bound sharp for all primes?"),
        {"Id": 1004, "PostHistoryTypeId": 5, "PostId": 100, "RevisionGUID": "10000000-0000-4000-8000-000000000100",
         "CreationDate": "2026-02-01T10:00:00.000", "UserId": 7, "Comment": "POSTCUTOFF_MARKER_7",
         "Text": "Is the Pellworth bound sharp? Solved in arXiv:2602.01234 by Tidewell POSTCUTOFF_MARKER_8.",
         "ContentLicense": LIC},
        {"Id": 1005, "PostHistoryTypeId": 10, "PostId": 100, "RevisionGUID": "20000000-0000-4000-8000-000000000100",
         "CreationDate": "2026-03-01T10:00:00.000", "UserId": -1, "Comment": "101",
         "Text": '{"OriginalQuestionIds":[200],"Voters":[{"Id":-1,"DisplayName":"Community"}]}'},
        _a(102, "2026-01-20T10:00:00.000", "Mirelle answer POSTCUTOFF_MARKER_9"),
        _a(103, "2026-01-05T23:59:59.400", "answered just in time"),
        *_q(200, "2025-10-01T10:00:00.000", "Corvane lattice", "What is the Corvane lattice of rank 3?"),
        _a(201, "2025-12-10T10:00:00.000", "merged answer POSTCUTOFF_MARKER_10"),
        {"Id": 2004, "PostHistoryTypeId": 38, "PostId": 200, "RevisionGUID": "30000000-0000-4000-8000-000000000200",
         "CreationDate": "2026-03-05T10:00:00.000", "UserId": 9, "Comment": "from 250 POSTCUTOFF_MARKER_11",
         "Text": '{"OriginalQuestionId":250,"DestinationQuestionId":200}'},
        *_q(300, "2025-06-01T10:00:00.000", "Quenby problem", "Quenby migrated POSTCUTOFF_MARKER_12"),
        {"Id": 3004, "PostHistoryTypeId": 36, "PostId": 300, "RevisionGUID": "40000000-0000-4000-8000-000000000300",
         "CreationDate": "2026-02-10T10:00:00.000", "UserId": -1, "Comment": "from math.stackexchange.com",
         "Text": "https://math.stackexchange.com/questions/5/POSTCUTOFF_MARKER_13"},
    ]
    comments = [
        {"Id": 1, "PostId": 100, "Score": 3, "Text": "first comment", "CreationDate": "2025-12-01T10:00:00.000",
         "UserId": 8, "ContentLicense": LIC},
        {"Id": 2, "PostId": 100, "Score": 1, "Text": "too late comment POSTCUTOFF_MARKER_14",
         "CreationDate": "2026-01-10T10:00:00.000", "UserId": 8, "ContentLicense": LIC},
    ]
    links = [{"Id": 1, "CreationDate": "2026-03-01T10:00:00.000", "PostId": 100, "RelatedPostId": 200,
              "LinkTypeId": 3}]
    dump = stackexchange_dump(root / "mathoverflow.net", posts, history, comments, links)
    data = ingested(root / "data", "stackexchange", [dump], site="mathoverflow.net")
    return Faces(data, CUTOFF, root / "logs").run(CASES)


test_no_leak, test_shown, test_audit = suite(CASES, FORBIDDEN)


@pytest.mark.parametrize("name", [
    "fetch-a102", "fetch-a201-merged-in", "fetch-unknown",
    "fetch-q300-migrated-later",
])
def test_later_members_answer_like_unknown_ids(answers: Answers, name: str) -> None:
    for face in FACES:
        assert answers.by_case[name][face].code == "not_found_before_cutoff", (face, name)


def test_instants_are_shown_to_the_millisecond(answers: Answers) -> None:
    for face in FACES:
        response = answers.by_case["fetch-q100"][face].response
        assert response is not None and response["metadata"]["created"].startswith("2025-11-01T10:00:00.123"), face


def test_an_answer_deleted_just_before_t_is_not_shown(tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("c11-deleted")
    posts = [_post(400, "2025-11-01T10:00:00.000", "<p>x</p>", title="Ashgrove sum"),
             _post(401, "2025-12-01T10:00:00.000", "<p>gone answer</p>", parent=400)]
    history = [*_q(400, "2025-11-01T10:00:00.000", "Ashgrove sum", "What is the Ashgrove sum?"),
               _a(401, "2025-12-01T10:00:00.000", "Ashgrove gone answer"),
               {"Id": 4012, "PostHistoryTypeId": 12, "PostId": 401,
                "RevisionGUID": "50000000-0000-4000-8000-000000000401", "CreationDate": "2026-01-05T23:59:59.700",
                "UserId": 8, "Text": '{"Voters":[{"Id":8,"DisplayName":"x"}]}'}]
    dump = stackexchange_dump(root / "mathoverflow.net", posts, history)
    data = ingested(root / "data", "stackexchange", [dump], site="mathoverflow.net")
    got = Faces(data, CUTOFF, root / "logs").run([Case("q", "fetch", {"id": "mathoverflow:400"})])
    for face in FACES:
        response = got.by_case["q"][face].response
        assert response is not None and "Ashgrove sum" in response["text"], face
        assert "gone answer" not in response["text"], face
