"""The conlang meta dump (real, ../shared/realdata/stackexchange/dump_conlang_meta) ingested and shown at cutoffs:
issue 5's "What must be shown" — post 47's body revisions, post 186's deletion, post 79's closure, the Community
markup migration — plus boundaries at T-1 ms / T / T+1 ms (dump stamps are kept to the millisecond) and what is
never read from Posts.xml.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from frozen_search.adapters.stackexchange.dump import dump_millis
from frozen_search.adapters.stackexchange.thread import render_markdown
from frozen_search.errors import NotFoundBeforeCutoff
from frozen_search.service import FrozenSearchService
from tests.stackexchange.conftest import dump_rows

Service = Callable[[str], FrozenSearchService]
DOC = "conlang.meta.stackexchange:{}"


def _history(post: str, types: tuple[str, ...]) -> list[dict[str, str]]:
    return [r for r in dump_rows("PostHistory.xml") if r["PostId"] == post and r["PostHistoryTypeId"] in types]


def _iso(millis: int) -> str:
    """UTC milliseconds as a cutoff or a displayed stamp: ``2018-05-20T17:02:28.207Z``."""
    return _shift(millis, 0)


def _shift(millis: int, delta_ms: int) -> str:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis + delta_ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def test_post_47_shows_the_body_revision_current_at_each_cutoff(conlang_at: Service) -> None:
    bodies = _history("47", ("2", "5"))
    assert len(bodies) == 14  # the dump's 14 body revisions (SOURCES.md)
    for k in (0, 3, 7, 9, 13):  # a cutoff one millisecond after revision k: revision k is the one shown
        row = bodies[k]
        cutoff = _shift(dump_millis(row["CreationDate"]), 1)
        fetched = conlang_at(cutoff).fetch(DOC.format(47))
        expected = render_markdown(row["Text"])
        assert expected in fetched.text, f"revision {k} at {cutoff}"
        later = [render_markdown(r["Text"]) for r in bodies[k + 1:]]
        assert all(body not in fetched.text for body in later if body != expected)
        assert fetched.title == "Some tag proposals"
    with pytest.raises(NotFoundBeforeCutoff):
        conlang_at(bodies[0]["CreationDate"][:10]).fetch(DOC.format(47))  # the day it was asked, at midnight


@pytest.mark.parametrize(("delta", "visible_revision"), [(-1, 0), (0, 0), (1, 1)])
def test_a_revision_is_shown_only_strictly_after_its_instant(conlang_at: Service, delta: int,
                                                             visible_revision: int) -> None:
    bodies = _history("47", ("2", "5"))
    at = dump_millis(bodies[1]["CreationDate"])  # 2018-02-08T12:24:50.320: shown at T iff it is before T
    text = conlang_at(_shift(at, delta)).fetch(DOC.format(47)).text
    assert render_markdown(bodies[visible_revision]["Text"]) in text


def test_post_186_is_invisible_while_deleted(conlang_at: Service) -> None:
    deleted = _history("186", ("12",))[0]["CreationDate"]
    undeleted = _history("186", ("13",))[0]["CreationDate"]
    assert (deleted[:10], undeleted[:10]) == ("2020-08-24", "2020-08-25")
    before = conlang_at("2020-08-24T12:00:00Z").fetch(DOC.format(186))
    before_text = before.text
    assert before.title.startswith("Questions of the form")
    for between in ("2020-08-24T12:30:19.031Z", "2020-08-24T23:00:00Z", "2020-08-25T00:48:50Z"):
        service = conlang_at(between)
        absent = rf"^\[not_found_before_cutoff\] {DOC.format(186)} has no state"
        with pytest.raises(NotFoundBeforeCutoff, match=absent) as gone:
            service.fetch(DOC.format(186))  # deleted before T: no state shown at T, so exactly the unknown answer
        # stored as a deletion span (audit 9): no store query sees the thread at T, as in a dump taken then
        assert "has no state before the cutoff" in gone.value.rejections[0].evidence
        assert DOC.format(186) not in [r.id for r in service.search("puzzle rule analyze").results]
    after = conlang_at("2020-08-25T00:48:50.071Z")  # one millisecond after the undeletion
    shown = after.fetch(DOC.format(186)).text  # plus a comment made while it was deleted
    comment = next(c for c in dump_rows("Comments.xml") if c["PostId"] == "186" and c["CreationDate"] > deleted)
    assert shown.startswith(before_text) and f"Comment on 186 ({comment['CreationDate']}Z)" in shown
    assert after.fetch(DOC.format(186)).metadata["as_of"] == undeleted + "Z"
    with pytest.raises(NotFoundBeforeCutoff):  # at the undeletion's own millisecond it is still deleted
        conlang_at(undeleted + "Z").fetch(DOC.format(186))
    assert DOC.format(186) in [r.id for r in after.search("analyze").results]


def test_post_79_shows_its_duplicate_closure_only_after_it(conlang_at: Service) -> None:
    closed_at = dump_millis(_history("79", ("10",))[0]["CreationDate"])  # 2018-05-20T17:02:28.207
    before = conlang_at(_iso(closed_at)).fetch(DOC.format(79))  # T at the closure's own millisecond
    assert "Closed" not in before.text and before.metadata["closed"] is None
    after = conlang_at(_shift(closed_at, 1)).fetch(DOC.format(79))
    assert "[Closed on 2018-05-20T17:02:28.207Z as duplicate of conlang.meta.stackexchange:119]" in after.text
    assert after.metadata["closed"] == {"on": "2018-05-20T17:02:28.207Z", "reason": "duplicate",
                                        "duplicate_of": [119]}
    assert after.metadata["as_of"] == "2018-05-20T17:02:28.207Z"
    # Posts.xml's ClosedDate (today's state) is never what decides it
    assert [p.get("ClosedDate") for p in dump_rows("Posts.xml") if p["Id"] == "79"] == ["2018-05-20T17:02:28.207"]


def test_the_community_markup_migration_never_reaches_earlier_cutoffs(conlang_at: Service) -> None:
    posts = {p["Id"]: p for p in dump_rows("Posts.xml")}
    migrated = [r for r in dump_rows("PostHistory.xml") if r.get("Comment") == "Commonmark migration"]
    assert len(migrated) == 17 and {r["UserId"] for r in migrated} == {"-1"}  # 16 posts' last edit, and 144's
    changed = 0
    for row in migrated:
        post = posts[row["PostId"]]
        question = post.get("ParentId") or post["Id"]
        previous = [r for r in _history(row["PostId"], ("2", "5")) if r["Id"] != row["Id"]][-1]
        old, new = render_markdown(previous["Text"]), render_markdown(row["Text"])
        early = conlang_at("2020-06-18T08:37:25Z").fetch(DOC.format(question), max_chars=100_000).text
        late = conlang_at("2020-06-18T08:37:27Z").fetch(DOC.format(question), max_chars=100_000).text
        assert old in early
        assert new in late
        if old != new:
            changed += 1
            assert "\n\n" + new not in early and "\n\n" + old not in late  # each post part starts a block
    assert changed >= 5  # "#Appendix F" -> "# Appendix F" and the like render differently


def test_an_answer_appears_only_after_it_was_posted_and_comments_only_after_theirs(conlang_at: Service) -> None:
    answer = _history("81", ("2",))[0]
    posted = dump_millis(answer["CreationDate"])
    assert "Answer 81" not in conlang_at(_iso(posted)).fetch(DOC.format(79)).text
    assert "Answer 81" in conlang_at(_shift(posted, 1)).fetch(DOC.format(79)).text
    comment = next(c for c in dump_rows("Comments.xml") if c["PostId"] == "81")
    at = dump_millis(comment["CreationDate"])
    assert render_markdown(comment["Text"]) not in conlang_at(_iso(at)).fetch(DOC.format(79)).text
    # a dump gives today's comment text and no edit flag: it is final only once the five-minute edit window closed
    # (300 s after its stamp, to the millisecond: shown 1 ms after the window's end, not at it)
    assert render_markdown(comment["Text"]) not in conlang_at(_shift(at, 300_000)).fetch(DOC.format(79)).text
    assert render_markdown(comment["Text"]) in conlang_at(_shift(at, 300_001)).fetch(DOC.format(79)).text


def test_an_answer_link_shows_the_whole_question(conlang_at: Service) -> None:
    service = conlang_at("2019-01-01")
    by_alias = service.fetch("conlang.meta.stackexchange:a/81")
    by_url = service.fetch("https://conlang.meta.stackexchange.com/a/81/35")
    by_anchor = service.fetch("https://conlang.meta.stackexchange.com/questions/79/some-slug/81#81")
    assert by_alias.id == by_url.id == by_anchor.id == DOC.format(79)
    assert by_alias.text == by_url.text == by_anchor.text


def test_tags_and_title_are_carried_forward_as_separate_deltas(conlang_at: Service) -> None:
    # post 18: title and tags edited on 2018-02-06T22:08:26 (types 4 and 6), its body never after creation
    tags_row = _history("18", ("6",))[0]
    title_row = _history("18", ("4",))[0]
    body_row = _history("18", ("2",))[0]
    fetched = conlang_at("2018-03-01").fetch(DOC.format(18))
    assert fetched.title == title_row["Text"]
    assert fetched.metadata["tags"] == ["discussion", "tags"] and tags_row["Text"] == "<discussion><tags>"
    assert render_markdown(body_row["Text"]) in fetched.text


def test_current_bodies_of_posts_xml_are_never_shown(conlang_at: Service) -> None:
    # post 13 today (Posts.xml Body, HTML of the migrated text) vs. what 2019 saw
    text = conlang_at("2019-01-01").fetch(DOC.format(6), max_chars=100_000).text
    assert "#Appendix F" in text  # the pre-migration Markdown, as rendered then
    assert "<h1>Appendix F</h1>" not in text


def test_searches_at_a_cutoff_see_only_the_text_of_then(conlang_at: Service) -> None:
    early = conlang_at("2018-02-08T05:00:00Z")
    assert DOC.format(47) in [r.id for r in early.search("tag proposals").results]
    # "Open questions" (a heading added on 2018-02-14) is not in the text of 2018-02-08
    assert DOC.format(47) not in [r.id for r in early.search('"open questions"').results]
    assert DOC.format(47) in [r.id for r in conlang_at("2018-03-01").search('"open questions"').results]


def test_an_answer_link_names_nothing_before_the_answer_was_posted(conlang_at: Service) -> None:
    posted = dump_millis(_history("81", ("2",))[0]["CreationDate"])  # question 79 was asked 6 hours before
    assert conlang_at(_iso(posted)).fetch(DOC.format(79)).id == DOC.format(79)
    for ref in ("conlang.meta.stackexchange:a/81", "https://conlang.meta.stackexchange.com/a/81"):
        with pytest.raises(NotFoundBeforeCutoff):
            conlang_at(_iso(posted)).fetch(ref)
        assert conlang_at(_shift(posted, 1)).fetch(ref).id == DOC.format(79)
