"""An arXiv version is public at its announcement, not its submission (cutoff_rules.arxiv.announced_by).

arXiv announces at 20:00 US Eastern what was submitted before that weekday's 14:00 deadline (Friday's on Sunday),
skips its listed deferred days, and assigns the identifier at the announcement. A paper submitted before ``T`` but
announced after it was not public at ``T``: every path (bulk snapshot, OAI arXivRaw, the live API) answers for it
exactly as in a world where it never existed (twin worlds), and a replacement submitted before ``T`` but announced
after it leaves the previous version shown.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from frozen_search.cutoff import iso_utc, parse_cutoff, zoned_seconds
from frozen_search.cutoff_rules import arxiv as rules
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.arxiv.conftest import ABS_JSONL, SNAPSHOT, ArxivStub, Recorded, _feed, arxiv_file, ingested, local_service
from tests.leaks import formats
from tests.leaks.formats import arxiv_raw_list, write

T = "2026-01-06"  # Monday 2026-01-05 19:00 EST


def _at(submitted: str, paper: str | None = None) -> str:
    return iso_utc(rules.announced_by(zoned_seconds(submitted), paper))


@pytest.mark.parametrize(("submitted", "announced"), [
    # a weekday deadline, to the second (stamps are whole seconds: 13:59:59 is before 14:00, 14:00:00 is not)
    ("2026-01-05T18:59:59Z", "2026-01-06T01:00:00Z"),  # Mon 13:59:59 EST -> Mon 20:00 EST
    ("2026-01-05T19:00:00Z", "2026-01-07T01:00:00Z"),  # Mon 14:00:00 EST -> Tue 20:00 EST
    ("2026-01-05T20:30:00Z", "2026-01-07T01:00:00Z"),  # Mon 15:30 EST -> Tue
    ("2026-01-08T19:00:00Z", "2026-01-12T01:00:00Z"),  # Thu 14:00 -> Sunday 20:00
    ("2026-01-09T18:59:59Z", "2026-01-12T01:00:00Z"),  # Fri 13:59:59 -> Sunday 20:00
    ("2026-01-09T19:00:00Z", "2026-01-13T01:00:00Z"),  # Fri 14:00:00 -> Monday 20:00
    ("2026-01-10T12:00:00Z", "2026-01-13T01:00:00Z"),  # Saturday -> Monday
    # DST (America/New_York): the same UTC time of day is before the deadline in EST, after it in EDT
    ("2026-03-06T18:30:00Z", "2026-03-09T00:00:00Z"),  # Fri 13:30 EST -> Sun 8 Mar 20:00 EDT (DST began 02:00)
    ("2026-03-13T18:30:00Z", "2026-03-17T00:00:00Z"),  # Fri 14:30 EDT -> Mon 16 Mar 20:00 EDT
    ("2026-10-30T17:59:59Z", "2026-11-02T01:00:00Z"),  # Fri 13:59:59 EDT -> Sun 1 Nov 20:00 EST (DST ended)
    ("2026-11-02T18:59:59Z", "2026-11-03T01:00:00Z"),  # Mon 13:59:59 EST -> Mon 20:00 EST
    # arXiv's listed deferred days: no deadline, no announcement
    ("2025-12-31T20:00:00Z", "2026-01-05T01:00:00Z"),  # Wed after 14:00, Thu 1 Jan deferred -> Sun 4 Jan
    ("2026-01-16T20:00:00Z", "2026-01-21T01:00:00Z"),  # Fri after 14:00, Mon 19 Jan deferred -> Tue 20 Jan
    ("2025-07-03T19:00:00Z", "2025-07-08T00:00:00Z"),  # Thu 15:00 EDT, Sun 6 Jul deferred -> Mon 7 Jul
    ("2024-12-24T20:00:00Z", "2024-12-30T01:00:00Z"),  # Tue after 14:00, Wed 25 + Thu 26 deferred -> Sun 29
    ("2026-11-25T20:00:00Z", "2026-11-30T01:00:00Z"),  # Wed after 14:00, Thanksgiving -> Sun 29 Nov
    # outside the listed years: two announcement evenings more (UNLISTED_EXTRA_ANNOUNCEMENTS)
    ("2022-06-01T12:00:00Z", "2022-06-06T00:00:00Z"),  # Wed 08:00 EDT -> Wed 20:00, Thu, Sun 5 Jun 20:00 EDT
    ("2026-12-31T20:00:00Z", "2027-01-06T01:00:00Z"),  # Thu 31 Dec (listed) -> Fri 1 Jan 2027 (unlisted) ...
])
def test_the_latest_announcement_of_a_submission(submitted: str, announced: str) -> None:
    assert _at(submitted) == announced


def test_a_v1_identifier_of_a_later_month_is_a_hold_until_that_month_ends() -> None:
    # scheduled for Monday 22 Dec 2025, but numbered 2601: announced in January, at the latest by its end
    assert _at("2025-12-20T12:00:00Z") == "2025-12-23T01:00:00Z"
    assert _at("2025-12-20T12:00:00Z", "2601.00404") == "2026-02-01T05:00:00Z"
    assert _at("2025-12-20T12:00:00Z", "2512.00404") == "2025-12-23T01:00:00Z"
    # 0704.0016 (real): submitted Saturday 2007-03-31, numbered in April, the month its schedule gives
    assert _at("2007-03-31T07:04:26Z", "0704.0016") == "2007-04-05T00:00:00Z"
    # a replacement is never public before the version it replaces
    held = rules.visible_from("2601.00404", [(1, zoned_seconds("2025-12-20T12:00:00Z")),
                                             (2, zoned_seconds("2026-01-07T12:00:00Z"))])
    assert held == {1: zoned_seconds("2026-02-01T05:00:00Z"), 2: zoned_seconds("2026-02-01T05:00:00Z")}


def test_the_rule_compares_to_the_millisecond() -> None:
    announced = zoned_seconds("2026-01-06T01:00:00Z")
    assert not rules.public_before(announced, parse_cutoff("2026-01-06T01:00:00Z"))
    assert rules.public_before(announced, parse_cutoff("2026-01-06T01:00:00.001Z"))
    v1 = zoned_seconds("2026-01-05T18:59:59Z")
    assert not rules.eligible("2601.00001", v1, parse_cutoff(T))
    assert rules.eligible("2601.00001", v1, parse_cutoff("2026-01-06T01:00:00.001Z"))
    versions = [(1, zoned_seconds("2025-10-01T10:00:00Z")), (2, zoned_seconds("2026-01-05T20:30:00Z"))]
    assert rules.version_at("2510.00001", versions, parse_cutoff(T)) == 1
    assert rules.version_at("2510.00001", versions, parse_cutoff("2026-01-07T01:00:00.001Z")) == 2


# -- twin worlds, one per input format ------------------------------------------------------------------------------

CALLS: list[tuple[str, str]] = [("search", "Quillfeather"), ("search", "Quillfeather lattices"),
                                ("fetch", "arxiv:2601.00404"), ("fetch", "arxiv:2601.00404v1"),
                                ("fetch", "https://arxiv.org/abs/2601.00404"), ("search", "Brackley forms")]


def _answers(service: FrozenSearchService) -> list[Any]:
    """What a caller sees for :data:`CALLS`: each hit or document in full, or the refusal's code and text."""
    seen: list[Any] = []
    for tool, arg in CALLS:
        try:
            if tool == "search":
                seen.append([hit.model_dump() for hit in service.search(arg).results])
            else:
                seen.append(service.fetch(arg).model_dump())
        except FrozenSearchError as exc:
            seen.append((exc.code, str(exc)))
    service.close()
    return seen


def _twins(make: Callable[[bool], Path], cutoff: str = T) -> tuple[list[Any], list[Any]]:
    return _answers(local_service(make(True), cutoff)), _answers(local_service(make(False), cutoff))


def _snapshot_line(paper: str, created: list[str], title: str, abstract: str) -> str:
    """A bulk-snapshot line: the first real line of the snapshot, its identity, dates and text replaced."""
    with arxiv_file(SNAPSHOT).open(encoding="utf-8") as handle:
        record = json.loads(handle.readline())
    record.update({"id": paper, "title": title, "abstract": f"  {abstract}\n", "comments": "12 pages",
                   "journal-ref": None, "doi": None, "report-no": None, "categories": "math.NT",
                   "versions": [{"version": f"v{k}", "created": c} for k, c in enumerate(created, start=1)],
                   "update_date": "2026-01-08", "authors_parsed": [["Quill", "Ada", ""]], "authors": "Ada Quill"})
    return json.dumps(record) + "\n"


OLD = ("1901.00303", ["Tue, 1 Jan 2019 10:00:00 GMT"], "Old Brackley paper", "Brackley forms were introduced here.")


def test_twin_worlds_bulk_snapshot_a_paper_submitted_before_t_announced_after(tmp_path: Path) -> None:
    # submitted Monday 2026-01-05 15:30 EST, after the 14:00 deadline: announced Tuesday 6 January 20:00 EST
    def make(with_paper: bool) -> Path:
        lines = _snapshot_line(*OLD)
        if with_paper:
            lines += _snapshot_line("2601.00404", ["Mon, 5 Jan 2026 20:30:00 GMT"], "Quillfeather lattices",
                                    "Quillfeather lattices are defined.")
        name = "with" if with_paper else "without"
        return ingested(tmp_path / name, [write(tmp_path / f"{name}.json", lines)])

    with_paper, without = _twins(make)
    assert with_paper == without
    assert without[2][0] == "not_found_before_cutoff" and without[-1][0]["id"] == "arxiv:1901.00303"
    shown = _answers(local_service(tmp_path / "with", "2026-01-07T01:00:00.001Z"))  # after its announcement
    assert shown[0][0]["id"] == "arxiv:2601.00404"


def test_twin_worlds_bulk_snapshot_one_second_before_the_deadline_is_shown(tmp_path: Path) -> None:
    # the same paper at 13:59:59 EST: announced Monday 20:00 EST, 2026-01-06T01:00:00Z; at T (19:00 EST) not yet
    line = _snapshot_line("2601.00404", ["Mon, 5 Jan 2026 18:59:59 GMT"], "Quillfeather lattices",
                          "Quillfeather lattices are defined.")
    data = ingested(tmp_path / "d", [write(tmp_path / "s.json", line)])
    assert _answers(local_service(data, T))[2][0] == "not_found_before_cutoff"
    assert _answers(local_service(data, "2026-01-06T01:00:00Z"))[2][0] == "not_found_before_cutoff"
    fetched = _answers(local_service(data, "2026-01-06T01:00:00.001Z"))[2]
    assert fetched["metadata"]["revision"] == "v1" and fetched["metadata"]["as_of"] == "2026-01-05T18:59:59Z"


def _raw(paper: str, versions: list[tuple[str, str]], title: str, abstract: str) -> dict[str, Any]:
    return {"id": paper, "datestamp": "2026-01-08", "versions": versions, "title": title, "abstract": abstract}


def test_twin_worlds_oai_arxivraw_a_friday_submission_after_the_deadline(tmp_path: Path) -> None:
    # Friday 2026-01-02 14:00:00 EST exactly (Thursday 1 January deferred): not Sunday's announcement but Monday
    # 5 January 20:00 EST, after T; 13:59:59 would have been announced Sunday 4 January, before T
    def make(with_paper: bool) -> Path:
        records = [_raw(OLD[0], [("v1", OLD[1][0])], OLD[2], OLD[3])]
        if with_paper:
            records.append(_raw("2601.00404", [("v1", "Fri, 2 Jan 2026 19:00:00 GMT")], "Quillfeather lattices",
                                "Quillfeather lattices are defined."))
        name = "with" if with_paper else "without"
        return ingested(tmp_path / name, [write(tmp_path / f"{name}.xml", arxiv_raw_list(records))])

    with_paper, without = _twins(make)
    assert with_paper == without
    early = _raw("2601.00404", [("v1", "Fri, 2 Jan 2026 18:59:59 GMT")], "Quillfeather lattices",
                 "Quillfeather lattices are defined.")
    data = ingested(tmp_path / "early", [write(tmp_path / "early.xml", arxiv_raw_list([early]))])
    assert _answers(local_service(data, T))[2]["metadata"]["revision"] == "v1"  # public since Sunday 20:00 EST


def test_a_replacement_submitted_before_t_and_announced_after_leaves_the_previous_version(tmp_path: Path) -> None:
    # arXivRaw carries the latest text only: v1 has no own text (content_unproven), and v2's text is not shown
    record = _raw("2510.00101", [("v1", "Wed, 1 Oct 2025 10:00:00 GMT"), ("v2", "Mon, 5 Jan 2026 20:30:00 GMT")],
                  "Quillfeather lattices, revised", "Quillfeather lattices are defined again.")
    data = ingested(tmp_path / "d", [write(tmp_path / "r.xml", arxiv_raw_list([record]))])
    service = local_service(data, T)
    with pytest.raises(FrozenSearchError) as refused:
        service.fetch("arxiv:2510.00101")
    assert refused.value.code == "content_unproven" and "revised" not in str(refused.value)
    assert service.search("Quillfeather").results == []
    with pytest.raises(FrozenSearchError) as named:
        service.fetch("arxiv:2510.00101v2")
    assert named.value.code == "not_found_before_cutoff"
    service.close()


# -- the live API (Atom), through the stub -------------------------------------------------------------------------

def _entry(paper: str, version: int, published: str, updated: str, title: str) -> bytes:
    """An API entry in the recorded entries' shape (see test_arxiv_live.V1_ENTRY)."""
    return f"""<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
    <id>http://arxiv.org/abs/{paper}v{version}</id>
    <title>{title}</title>
    <updated>{updated}</updated>
    <link href="https://arxiv.org/abs/{paper}v{version}" rel="alternate" type="text/html"/>
    <link href="https://arxiv.org/pdf/{paper}v{version}" rel="related" type="application/pdf" title="pdf"/>
    <summary>Stub abstract of {title}.</summary>
    <category term="math.NT" scheme="http://arxiv.org/schemas/atom"/>
    <published>{published}</published>
    <arxiv:primary_category term="math.NT"/>
    <author>
      <name>Ada Quill</name>
    </author>
  </entry>
""".encode()


def _live_fetch(service: FrozenSearchService, ref: str) -> Any:
    try:
        return service.fetch(ref).model_dump()
    except FrozenSearchError as exc:
        return exc.code, str(exc)


@pytest.mark.serial  # the stub serves on 127.0.0.1
def test_twin_worlds_live_api_v1_submitted_before_t_announced_after(
        live_at: Callable[..., FrozenSearchService], arxiv_stub: ArxivStub) -> None:
    paper = "2601.00404"
    arxiv_stub.ids[paper] = Recorded(200, _feed([_entry(paper, 1, "2026-01-05T20:30:00Z", "2026-01-05T20:30:00Z",
                                                        "Quillfeather lattices")]))
    with_paper = _live_fetch(live_at(T), f"arxiv:{paper}")
    del arxiv_stub.ids[paper]  # the world without it: the API's empty answer (recorded id_0000.0000)
    without = _live_fetch(live_at(T), f"arxiv:{paper}")
    assert with_paper == without and without[0] == "not_found_before_cutoff"


@pytest.mark.serial
def test_twin_worlds_live_api_v2_submitted_before_t_announced_after(
        live_at: Callable[..., FrozenSearchService], arxiv_stub: ArxivStub) -> None:
    paper, v1_date = "2510.00101", "2025-10-01T10:00:00Z"
    v1 = _entry(paper, 1, v1_date, v1_date, "Quillfeather lattices")
    arxiv_stub.versioned[f"{paper}v1"] = v1
    arxiv_stub.ids[paper] = Recorded(200, _feed([_entry(paper, 2, v1_date, "2026-01-05T20:30:00Z",
                                                        "Quillfeather lattices revised POSTCUTOFF")]))
    with_v2 = _live_fetch(live_at(T), f"arxiv:{paper}")
    arxiv_stub.ids[paper] = Recorded(200, _feed([v1]))  # the world where v2 was never submitted
    without = _live_fetch(live_at(T), f"arxiv:{paper}")
    for answer in (with_v2, without):  # the recorded request differs (id_list=...v1): provenance only
        answer["metadata"].pop("provenance", None)
    assert with_v2 == without and without["metadata"]["revision"] == "v1"
    assert "POSTCUTOFF" not in json.dumps(with_v2)


def test_every_listed_deferred_day_is_sourced_and_in_range() -> None:
    assert all(rules.HOLIDAYS_FROM <= day <= rules.HOLIDAYS_UNTIL for day in rules.HOLIDAYS)
    assert datetime(2026, 1, 1, tzinfo=UTC).date() in rules.HOLIDAYS


def test_a_files_coverage_is_proven_by_submissions_not_by_announcement_bounds(tmp_path: Path) -> None:
    # submitted Wed 2022-06-01 12:00Z: announced that evening (2022-06-02T00:00Z), at the latest (2022 has no list)
    # Sunday 5 June 20:00 EDT. A dump taken on 3 June holds it: its date is accepted, and an undeclared file
    # proves itself taken after the submission only (never after the announcement bound)
    record = _raw("2206.00101", [("v1", "Wed, 1 Jun 2022 12:00:00 GMT")], "Quillfeather lattices",
                  "Quillfeather lattices are defined.")
    path = write(tmp_path / "r.xml", arxiv_raw_list([record]))
    declared = formats.ingested(tmp_path / "declared", "arxiv", [path], dump_date="2022-06-03")
    undeclared = formats.ingested(tmp_path / "undeclared", "arxiv", [path])
    for data, until, basis in ((declared, "2022-06-03T00:00:00Z", "declared"),
                               (undeclared, "2022-06-01T12:00:00.999Z", "newest_event")):
        store = Store(data / "store.sqlite3")
        [row] = store.coverage()
        store.close()
        assert (iso_utc(datetime.fromtimestamp(row.covered_until / 1000, UTC)), row.basis) == (until, basis)


def test_a_store_of_an_older_build_dated_by_submission_is_refused_loudly(tmp_path: Path) -> None:
    # an older build stored each version at its submission, whole seconds: at T it would show 2601.00404 (announced
    # after T). Such rows are refused with a coded error, never shown
    record = _raw("2601.00404", [("v1", "Mon, 5 Jan 2026 20:30:00 GMT")], "Quillfeather lattices",
                  "Quillfeather lattices are defined.")
    data = ingested(tmp_path / "d", [write(tmp_path / "r.xml", arxiv_raw_list([record]))])
    db = sqlite3.connect(data / "store.sqlite3")
    with db:
        db.execute("UPDATE revisions SET valid_from = valid_from - precision_ms + 1000, precision_ms = 1000 "
                   "WHERE source = 'arxiv'")
    db.close()
    service = local_service(data, "2026-01-07T12:00:00Z")
    with pytest.raises(FrozenSearchError) as refused:
        service.fetch("arxiv:2601.00404")
    assert refused.value.code == "store_integrity" and "2026" not in str(refused.value)
    with pytest.raises(FrozenSearchError) as searched:
        service.search("Quillfeather")
    assert searched.value.code == "store_integrity"
    service.close()


def test_a_real_paper_numbered_in_the_month_after_its_schedule_is_refused_until_that_month_ends(
        tmp_path: Path) -> None:
    # real abs file: 1809.00949 submitted Mon 2018-08-20 18:15:53 GMT (14:15 EDT); its schedule says Tuesday 21
    # August 20:00 EDT (two evenings more, 2018 is not listed: Thursday 23 August), but arXiv numbers papers by the
    # month of first announcement: it was announced in September (a hold), so it counts from 1 October 00:00 EDT
    with arxiv_file(ABS_JSONL).open(encoding="utf-8") as handle:
        line = next(line for line in handle if '"ftp/arxiv/papers/1809/1809.00949.abs"' in line)
    data = ingested(tmp_path / "d", [write(tmp_path / "abs.jsonl", line)])
    for cutoff in ("2018-08-24T00:00:00.001Z", "2018-09-30T12:00:00Z", "2018-10-01T04:00:00Z"):
        service = local_service(data, cutoff)
        with pytest.raises(FrozenSearchError) as refused:
            service.fetch("arxiv:1809.00949")
        assert refused.value.code == "not_found_before_cutoff", cutoff
        assert service.search("construction workers viewing patterns").results == [], cutoff
        service.close()
    service = local_service(data, "2018-10-01T04:00:00.001Z")
    assert service.fetch("arxiv:1809.00949").metadata["as_of"] == "2018-08-20T18:15:53Z"
    service.close()


def _reference(submitted: int) -> int:
    """:func:`rules.announced_by` (no identifier) computed from the submission's own second, step by step."""
    local = datetime.fromtimestamp(submitted, UTC).astimezone(rules.EASTERN)
    day = local.date() + timedelta(days=1 if local.time() >= rules.DEADLINE else 0)
    while day.weekday() > 4 or day in rules.HOLIDAYS:
        day += timedelta(days=1)
    announced = day + timedelta(days=2 if day.weekday() == 4 else 0)
    while not ((announced.weekday() <= 3 or announced.weekday() == 6) and announced not in rules.HOLIDAYS):
        announced += timedelta(days=1)
    listed = all(rules.HOLIDAYS_FROM <= d <= rules.HOLIDAYS_UNTIL for d in (local.date(), announced))
    extra = 0 if listed else rules.UNLISTED_EXTRA_ANNOUNCEMENTS
    while extra:
        announced += timedelta(days=1)
        if (announced.weekday() <= 3 or announced.weekday() == 6) and announced not in rules.HOLIDAYS:
            extra -= 1
    return int(datetime.combine(announced, rules.ANNOUNCEMENT, tzinfo=rules.EASTERN).timestamp())


@pytest.mark.parametrize("year", [2007, 2022, 2025, 2026])
def test_the_hourly_computation_equals_the_per_second_one(year: int) -> None:
    # both sides of every DST switch (06:00/07:00 UTC) and of every deadline (18:00/19:00 UTC) of the year
    start = int(datetime(year, 1, 1, tzinfo=UTC).timestamp())
    for day in range(365):
        for hour in (6, 7, 18, 19):
            for second in (-1, 0, 1):
                submitted = start + day * 86400 + hour * 3600 + second
                assert rules.announced_by(submitted) == _reference(submitted), iso_utc(submitted)
