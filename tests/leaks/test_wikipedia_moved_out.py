"""Pages moved out of the served namespaces after the cutoff (leak class 4, and over-refusal).

An article draftified after ``T`` (``X`` to ``Draft:X``, namespace 118), moved to a user page or into ``Template:``,
or a template moved out of ``Template:``, is listed by a later export under its later title, in a namespace the
ingest does not keep (or does not serve as articles): it was missing at ``T``, so the answer at ``T`` depended on an
event after ``T`` (the page public at ``T`` was refused). Each test compares two stores that differ only in events
after ``T`` (the move, the redirect it left) and requires byte-identical answers at ``T``.

Exports carry the real English Wikipedia ``<siteinfo>`` (namespaces ``Draft`` 118, ``User`` 2, ``Template`` 10),
read from the real 2014 Pear export; the move's traces follow MediaWiki 1.39 (``MovePage::moveToInternal``): a
``move``/``move`` log item whose ``<params>`` hold ``4::target`` and ``5::noredir``, a null revision on the moved
page and the first revision of the redirect left at the old title, both with the comment "X moved page [[A]] to
[[B]]: reason".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.adapters.wikipedia import dump as wikipedia_dump
from frozen_search.config import Settings
from frozen_search.errors import StoreIntegrityError
from frozen_search.ops.ingest import ingest
from tests.conftest import PEAR_2002, wiki_file
from tests.leaks.formats import LogItem, Page, Rev, ingested, mediawiki_export, write
from tests.leaks.test_audit_wikipedia_logs import _real_siteinfo, observe_at

CUTOFF = "2026-01-06"
MOVED_AT = "2026-02-02T09:00:00Z"  # after the cutoff
NAMESPACES = {"Draft:": 118, "User:": 2, "Template:": 10}
BLOOM = Page("Template:Bloom", 77000020, [Rev(9700020, "2025-04-01T10:00:00Z", "a {{{1}}} bloom")], ns=10)
ORCHID = [Rev(9700006, "2025-07-01T10:00:00Z", "The '''orchid lemma''' bounds the petals of an orchid."),
          Rev(9700007, "2025-09-01T10:00:00Z",
              "The '''orchid lemma''' bounds the petals of an orchid with {{Bloom|big}}.")]
ROSE = Page("Rose", 77000010, [Rev(9700010, "2025-03-01T10:00:00Z", "The '''rose''' is a flower of the garden.")])


def _ns(title: str) -> int:
    return next((number for prefix, number in NAMESPACES.items() if title.startswith(prefix)), 0)


def _move(old: str, new: str, at: str = MOVED_AT, redirect: bool = False, id: int = 8700020) -> LogItem:
    """A ``move``/``move`` log item as MediaWiki 1.39 writes it (``<params>`` PHP-serialized, lengths in bytes)."""
    length = len(new.encode())
    return LogItem(id, at, "move", "move", old, comment="not ready",
                   params=f'a:2:{{s:9:"4::target";s:{length}:"{new}";s:10:"5::noredir";s:1:"{0 if redirect else 1}";}}')


def _null(rev_id: int, old: str, new: str, text: str, at: str = MOVED_AT) -> Rev:
    """The null revision a move adds to the moved page (the text of its last revision)."""
    return Rev(rev_id, at, text, comment=f"Bob moved page [[{old}]] to [[{new}]]: not ready")


_observe = observe_at


def _worlds(tmp_path: Path, worlds: dict[str, list[str]], ids: tuple[str, ...], queries: tuple[str, ...],
            cutoff: str = CUTOFF) -> dict[str, dict[str, str]]:
    """Each world (its export files' XML, ingested in order) observed at ``cutoff``."""
    seen = {}
    for name, exports in worlds.items():
        files = [write(tmp_path / f"{name}-{n}.xml", _real_siteinfo(export)) for n, export in enumerate(exports)]
        seen[name] = _observe(ingested(tmp_path / name, "wikipedia", files), cutoff, ids, queries)
    return seen


def _id(title: str) -> str:
    return "wikipedia:" + title.replace(" ", "_")


QUERIES = ("orchid lemma petals", "big bloom", "flower")


@pytest.mark.parametrize("target", ["Draft:Orchid lemma", "User:Alice/Orchid lemma", "Template:Orchid lemma"])
@pytest.mark.parametrize("evidence", ["logitem", "null revision"])
def test_an_article_moved_out_after_the_cutoff_is_served_at_it(tmp_path: Path, target: str, evidence: str) -> None:
    """Orchid lemma, an article at ``T``, was moved to ``target`` after ``T``: at ``T`` it is fetched and found
    under its title then, its templates expanded as an article's, as if it had never moved (it was refused, and
    found by no search: the page was not kept, or was taken for a template)."""
    if evidence == "logitem":
        moved = mediawiki_export([ROSE, BLOOM, Page(target, 77000006, ORCHID, ns=_ns(target))],
                                 [_move("Orchid lemma", target)])
    else:
        null = _null(9700008, "Orchid lemma", target, ORCHID[-1].text)
        moved = mediawiki_export([ROSE, BLOOM, Page(target, 77000006, [*ORCHID, null], ns=_ns(target))])
    kept = mediawiki_export([ROSE, BLOOM, Page("Orchid lemma", 77000006, ORCHID)])
    oldids = ("https://en.wikipedia.org/w/index.php?oldid=9700007", "https://en.wikipedia.org/w/index.php?oldid=9700008")
    seen = _worlds(tmp_path, {"moved": [moved], "kept": [kept]}, ("wikipedia:Orchid_lemma", _id(target), *oldids),
                   QUERIES)
    assert "with a big bloom" in seen["kept"]["wikipedia:Orchid_lemma"]
    assert '"title":"Orchid lemma"' in seen["kept"][oldids[0]]
    assert '"id":"wikipedia:Orchid_lemma"' in seen["kept"]["big bloom"]
    assert seen["kept"][_id(target)].startswith("[not_found_before_cutoff]")
    assert seen["moved"] == seen["kept"]


@pytest.mark.parametrize("reader", ["lxml", "mwxml"])
def test_the_log_before_or_after_the_pages_gives_one_store(tmp_path: Path, reader: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The draftified page is kept whether the logging dump comes before the pages (known as the page is read) or
    after them (the pages read again for it), by both XML readers."""
    monkeypatch.setattr(wikipedia_dump, "XML_READER", reader)
    page = mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)])
    log = mediawiki_export([], [_move("Orchid lemma", "Draft:Orchid lemma")])
    kept = mediawiki_export([ROSE, BLOOM, Page("Orchid lemma", 77000006, ORCHID)])
    seen = _worlds(tmp_path, {"log-first": [log, page], "log-last": [page, log], "kept": [kept]},
                   ("wikipedia:Orchid_lemma",), QUERIES)
    assert "with a big bloom" in seen["kept"]["wikipedia:Orchid_lemma"]
    assert seen["log-first"] == seen["kept"]
    assert seen["log-last"] == seen["kept"]


@pytest.mark.parametrize("target", ["Draft:Orchid lemma", "User:Alice/Orchid lemma", "Orchid lemma (mathematics)"])
def test_the_redirect_a_move_after_the_cutoff_left_does_not_shadow_the_page(tmp_path: Path, target: str) -> None:
    """The move left a redirect at the old title (a new page, its first revision saved with the move's comment):
    it was taken for a move of the redirect page, which, when its id sorts first, stood for the title at ``T`` with
    no revision then (a refusal, even for a move within the main namespace)."""
    redirect = Page("Orchid lemma", 77000099, [Rev(9700099, MOVED_AT, f"#REDIRECT [[{target}]]",
                                                   comment=f"Bob moved page [[Orchid lemma]] to [[{target}]]: "
                                                           "not ready")])
    null = _null(9700008, "Orchid lemma", target, ORCHID[-1].text)
    moved = mediawiki_export([ROSE, BLOOM, Page(target, 77000006, [*ORCHID, null], ns=_ns(target)), redirect],
                             [_move("Orchid lemma", target, redirect=True)])
    kept = mediawiki_export([ROSE, BLOOM, Page("Orchid lemma", 77000006, ORCHID)])
    seen = _worlds(tmp_path, {"moved": [moved], "kept": [kept]}, ("wikipedia:Orchid_lemma", _id(target)), QUERIES)
    assert "with a big bloom" in seen["kept"]["wikipedia:Orchid_lemma"]
    assert seen["moved"] == seen["kept"]


def test_moved_back_and_forth(tmp_path: Path) -> None:
    """Draftified (2025-08), accepted back (2025-10), draftified again after ``T``: an article at ``T``, as where the
    last move never happened; at a cutoff in between it was a draft in both (absent), and before it an article."""
    moves = [_move("Orchid lemma", "Draft:Orchid lemma", "2025-08-01T09:00:00Z", id=8700021),
             _move("Draft:Orchid lemma", "Orchid lemma", "2025-10-01T09:00:00Z", id=8700022)]
    again = _move("Orchid lemma", "Draft:Orchid lemma", id=8700023)
    worlds = {"again": [mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)],
                                         [*moves, again])],
              "once": [mediawiki_export([ROSE, BLOOM, Page("Orchid lemma", 77000006, ORCHID)], moves)]}
    ids = ("wikipedia:Orchid_lemma", "wikipedia:Draft:Orchid_lemma")
    at_cutoff = _worlds(tmp_path / "t", worlds, ids, QUERIES)
    assert "with a big bloom" in at_cutoff["once"]["wikipedia:Orchid_lemma"]
    assert at_cutoff["again"] == at_cutoff["once"]
    drafted = _worlds(tmp_path / "drafted", worlds, ids, QUERIES, cutoff="2025-09-01")
    assert drafted["again"]["wikipedia:Orchid_lemma"].startswith("[not_found_before_cutoff]")
    assert drafted["again"]["orchid lemma petals"] == '{"results":[]}'
    assert drafted["again"] == drafted["once"]
    before = _worlds(tmp_path / "before", worlds, ids, QUERIES, cutoff="2025-07-15")
    assert "bounds the petals of an orchid." in before["once"]["wikipedia:Orchid_lemma"]
    assert before["again"] == before["once"]


def test_moved_out_before_the_cutoff_stays_absent(tmp_path: Path) -> None:
    """Draftified before ``T`` (2025-10), moved on to a user page after it: absent at ``T`` in both stores (neither
    its article title nor its draft title is served); an article before the first move."""
    first = _move("Orchid lemma", "Draft:Orchid lemma", "2025-10-01T09:00:00Z", id=8700021)
    later = _move("Draft:Orchid lemma", "User:Alice/Orchid lemma", id=8700022)
    worlds = {"later": [mediawiki_export([ROSE, BLOOM, Page("User:Alice/Orchid lemma", 77000006, ORCHID, ns=2)],
                                         [first, later])],
              "draft": [mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)],
                                         [first])]}
    ids = ("wikipedia:Orchid_lemma", "wikipedia:Draft:Orchid_lemma", "wikipedia:User:Alice/Orchid_lemma")
    seen = _worlds(tmp_path / "t", worlds, ids, QUERIES)
    assert all(seen["draft"][id].startswith("[not_found_before_cutoff]") for id in ids)
    assert seen["draft"]["orchid lemma petals"] == '{"results":[]}'
    assert seen["later"] == seen["draft"]
    before = _worlds(tmp_path / "before", worlds, ids, QUERIES, cutoff="2025-09-15")
    assert "with a big bloom" in before["draft"]["wikipedia:Orchid_lemma"]
    assert before["later"] == before["draft"]


@pytest.mark.parametrize("evidence", ["logitem", "null revision"])
def test_a_move_at_the_cutoff_is_after_it(tmp_path: Path, evidence: str) -> None:
    """``T`` is exclusive: a move stamped exactly ``T`` is after the cutoff (the article is served), one a second
    before it is not (absent, as a draft never accepted)."""
    kept = mediawiki_export([ROSE, BLOOM, Page("Orchid lemma", 77000006, ORCHID)])
    seen = {}
    for at in ("2026-01-06T00:00:00Z", "2026-01-05T23:59:59Z"):
        if evidence == "logitem":
            moved = mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)],
                                     [_move("Orchid lemma", "Draft:Orchid lemma", at)])
        else:
            null = _null(9700008, "Orchid lemma", "Draft:Orchid lemma", ORCHID[-1].text, at)
            moved = mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, [*ORCHID, null], ns=118)])
        seen[at] = _worlds(tmp_path / at[:10], {"moved": [moved], "kept": [kept]}, ("wikipedia:Orchid_lemma",),
                           QUERIES)
    assert seen["2026-01-06T00:00:00Z"]["moved"] == seen["2026-01-06T00:00:00Z"]["kept"]
    assert seen["2026-01-05T23:59:59Z"]["moved"]["wikipedia:Orchid_lemma"].startswith("[not_found_before_cutoff]")
    assert seen["2026-01-05T23:59:59Z"]["moved"]["orchid lemma petals"] == '{"results":[]}'


@pytest.mark.parametrize("evidence", ["logitem", "null revision"])
def test_a_template_moved_out_after_the_cutoff_still_expands_at_it(tmp_path: Path, evidence: str) -> None:
    """Template:Bloom was moved to a user page after ``T``: at ``T`` Orchid lemma's {{Bloom|big}} expands with it
    and the template is fetched as a template, never a search hit, as where it stayed (it was stripped: the user
    page was not kept)."""
    article = Page("Orchid lemma", 77000006, ORCHID)
    target = "User:Alice/Bloom"
    if evidence == "logitem":
        moved = mediawiki_export([ROSE, article, Page(target, BLOOM.id, BLOOM.revisions, ns=2)],
                                 [_move("Template:Bloom", target)])
    else:
        null = _null(9700021, "Template:Bloom", target, BLOOM.revisions[-1].text)
        moved = mediawiki_export([ROSE, article, Page(target, BLOOM.id, [*BLOOM.revisions, null], ns=2)])
    kept = mediawiki_export([ROSE, article, BLOOM])
    seen = _worlds(tmp_path, {"moved": [moved], "kept": [kept]},
                   ("wikipedia:Orchid_lemma", "wikipedia:Template:Bloom", _id(target)), (*QUERIES, "bloom"))
    assert "with a big bloom" in seen["kept"]["wikipedia:Orchid_lemma"]
    assert '"title":"Template:Bloom"' in seen["kept"]["wikipedia:Template:Bloom"]
    assert "Template:Bloom" not in seen["kept"]["bloom"]
    assert seen["moved"] == seen["kept"]


@pytest.mark.parametrize("reader", ["lxml", "mwxml"])
def test_a_history_too_long_to_hold_is_not_kept_unless_logged(tmp_path: Path, reader: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The revisions of a page of another namespace are held until one of its move revisions shows that it bore a
    kept title; past :data:`~frozen_search.adapters.wikipedia.dump.HOLD_CHARS` characters before that the page is
    not kept (counted in the ingest report; fail closed: unknown at ``T``), unless a move log item names it."""
    null = _null(9700008, "Orchid lemma", "Draft:Orchid lemma", ORCHID[-1].text)
    moved = mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, [*ORCHID, null], ns=118)])
    logged = mediawiki_export([ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, [*ORCHID, null], ns=118)],
                              [_move("Orchid lemma", "Draft:Orchid lemma")])
    monkeypatch.setattr(wikipedia_dump, "XML_READER", reader)
    monkeypatch.setattr(wikipedia_dump, "HOLD_CHARS", 60)
    seen = _worlds(tmp_path, {"moved": [moved], "logged": [logged]}, ("wikipedia:Orchid_lemma",), ())
    assert seen["moved"]["wikipedia:Orchid_lemma"].startswith("[not_found_before_cutoff]")
    assert "with a big bloom" in seen["logged"]["wikipedia:Orchid_lemma"]
    result = ingest(Settings.from_env({}, data_dir=tmp_path / "counted"), "wikipedia",
                    [write(tmp_path / "counted.xml", _real_siteinfo(moved))])
    assert "1 pages of other namespaces not kept: too long" in result.report.summary()
    monkeypatch.setattr(wikipedia_dump, "HOLD_CHARS", 10_000)  # held whole: kept
    held = _worlds(tmp_path / "held", {"moved": [moved]}, ("wikipedia:Orchid_lemma",), ())
    assert held["moved"] == seen["logged"]


def test_the_files_are_read_again_only_for_pages_the_logs_named_late(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With the logging dump first, every page is known as it is read: no file is read a second time; with it last,
    the files are read again for the draftified page alone."""
    reads: list[bool] = []
    real = wikipedia_dump._ingest_file

    def counted(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        reads.append(kwargs.get("only") is not None)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(wikipedia_dump, "_ingest_file", counted)
    page = mediawiki_export([ROSE, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)])
    log = mediawiki_export([], [_move("Orchid lemma", "Draft:Orchid lemma")])
    _worlds(tmp_path / "first", {"first": [log, page]}, (), ())
    assert reads == [False, False]
    reads.clear()
    _worlds(tmp_path / "last", {"last": [page, log]}, (), ())
    assert reads == [False, False, True, True]


def test_a_page_kept_by_a_log_item_is_hidden_until_the_run_ends(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed after a checkpoint that stored the draftified page (named by a log item read first) but before
    its end (where logged moves are recorded) showed the page as "Draft:Orchid lemma" at every cutoff, a title
    given after ``T``: it is hidden until the run ends (since audit 10 the store's Wikipedia is refused whole until
    then, ``store_integrity``: the deletion spans too are computed at the end); the resumed run serves it at ``T``
    as the article."""
    monkeypatch.setattr(wikipedia_dump, "CHECKPOINT_REVISIONS", 1)
    log = write(tmp_path / "log.xml", _real_siteinfo(mediawiki_export([], [_move("Orchid lemma",
                                                                                 "Draft:Orchid lemma")])))
    pages = write(tmp_path / "pages.xml", _real_siteinfo(mediawiki_export(
        [ROSE, BLOOM, Page("Draft:Orchid lemma", 77000006, ORCHID, ns=118)])))
    last = write(tmp_path / "last.xml", _real_siteinfo(mediawiki_export([Page("Lily", 77000030, [
        Rev(9700030, "2025-02-01T10:00:00Z", "The '''lily''' is white.")])])))
    data = tmp_path / "data"

    def killed(path: Path) -> None:
        if path == last:
            raise KeyboardInterrupt  # (as a kill would: after the checkpoints of the files before)

    with pytest.raises(KeyboardInterrupt):
        ingest(Settings.from_env({}, data_dir=data), "wikipedia", [log, pages, last], on_file=killed)
    ids = ("wikipedia:Orchid_lemma", "wikipedia:Draft:Orchid_lemma")
    with pytest.raises(StoreIntegrityError, match="has not finished"):  # (audit 10: the whole store until its end)
        _observe(data, CUTOFF, ids, QUERIES)
    interrupted = _observe(data, CUTOFF, ids, ())
    assert all(interrupted[id].startswith("[store_integrity]") for id in ids)
    ingest(Settings.from_env({}, data_dir=data), "wikipedia", [log, pages, last])
    resumed = _observe(data, CUTOFF, ids, QUERIES)
    assert "with a big bloom" in resumed["wikipedia:Orchid_lemma"]


def test_a_template_of_an_export_without_ns_keeps_its_prefix(tmp_path: Path) -> None:
    """Export schemas 0.3 and 0.4 give no ``<ns>``: the readers split ``Template:Bloom`` into namespace 10 and
    "Bloom", and the page was stored as ``wikipedia:Bloom`` (never found as the template, and never moved in the
    right place). Its head is the real 0.3 Pear export's; its pages follow that export's shape."""
    real = wiki_file(PEAR_2002)
    head = real.read_text(encoding="utf-8").split("  <page>", 1)[0]

    def page(title: str, id: int, rev: int, text: str) -> str:
        return (f"  <page>\n    <title>{title}</title>\n    <id>{id}</id>\n    <revision>\n      <id>{rev}</id>\n"
                "      <timestamp>2025-04-01T10:00:00Z</timestamp>\n      <contributor>\n        <username>Alice"
                "</username>\n        <id>1001</id>\n      </contributor>\n      <comment>edit</comment>\n"
                f"      <text xml:space=\"preserve\">{text}</text>\n    </revision>\n  </page>\n")

    export = (head + page("Template:Bloom", 77000020, 9700020, "a {{{1}}} bloom")
              + page("Orchid lemma", 77000006, 9700006, "The orchid lemma bounds it with {{Bloom|big}}.")
              + "</mediawiki>\n")
    data = ingested(tmp_path / "data", "wikipedia", [write(tmp_path / "old.xml", export)])
    seen = _observe(data, CUTOFF, ("wikipedia:Template:Bloom", "wikipedia:Bloom", "wikipedia:Orchid_lemma"), ())
    assert '"title":"Template:Bloom"' in seen["wikipedia:Template:Bloom"]
    assert seen["wikipedia:Bloom"].startswith("[not_found_before_cutoff]")
    assert "with a big bloom" in seen["wikipedia:Orchid_lemma"]
