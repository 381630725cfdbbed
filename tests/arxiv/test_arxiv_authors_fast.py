"""The faster ``author_names`` (``frozen_search/adapters/arxiv/authors.py``, wt-authfast) gives exactly the names of
the parse as first written (``tests/arxiv/arxiv_authors_reference.py``, kept unchanged): on every authors string of
the real arXiv data in ../shared (OAI arXivRaw and hepcrawl ``<authors>``, the bulk snapshot's ``authors``, every
abs file's ``Authors:`` field, arxiv-browse's metadata rows, the search documents), as written and whitespace
collapsed, and on random strings built from the pieces the rules treat specially; and ``tex_to_unicode`` gives the
text of its first writing."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from lxml import etree

from frozen_search.adapters.arxiv.authors import author_names, tex_to_unicode
from tests.arxiv import arxiv_authors_reference as reference
from tests.conftest import realdata


def _abs_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # arXiv's older abs files are latin-1 (as the ingest reads them)


def _real_authors() -> dict[str, list[str]]:
    """Every authors string of the real arXiv data, by input."""
    found: dict[str, list[str]] = {"snapshot": [], "metadata": [], "docmeta": [], "oai": [], "abs": []}
    for path in sorted(realdata("arxiv", "snapshot").glob("*.jsonl")):
        found["snapshot"] += [json.loads(line)["authors"] for line in path.read_text(encoding="utf-8").splitlines()]
    rows = realdata("arxiv", "db", "arxiv-browse_arXiv_metadata_rows.jsonl").read_text(encoding="utf-8")
    found["metadata"] = [row["authors"] for row in map(json.loads, rows.splitlines()) if row.get("authors")]
    for path in sorted(realdata("arxiv", "docmeta").glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        found["docmeta"] += [d["authors"] for d in (document if isinstance(document, list) else [document])]
    for path in sorted(realdata("arxiv", "oai").rglob("*.xml")):
        found["oai"] += [element.text for element in etree.parse(str(path)).iter("{*}authors") if element.text]
    for path in sorted(realdata("arxiv", "abs").rglob("*.abs")):
        field = re.search(r"^Authors: (.*(?:\n[ \t].*)*)", _abs_text(path), re.MULTILINE)
        assert field is not None, path
        found["abs"].append(field.group(1))
    return found


def test_every_real_authors_string_gives_the_names_of_the_parse_as_first_written() -> None:
    found = _real_authors()
    assert {name: len(strings) >= count for (name, strings), count in zip(
        found.items(), (200, 1000, 25, 380, 17), strict=True)} == dict.fromkeys(found, True)
    differing = [(authors, author_names(authors), reference.author_names(authors))
                 for strings in found.values() for written in strings
                 for authors in (written, " ".join(written.split()))
                 if author_names(authors) != reference.author_names(authors)]
    assert differing == []
    texts = [written for strings in found.values() for written in strings if "\\" in written]
    assert len(texts) > 100
    assert [tex_to_unicode(text) for text in texts] == [reference.tex_to_unicode(text) for text in texts]


# the pieces the rules treat specially (rules 1-4 of the module docstring), and plain name words
_PIECES = [
    ",", ", ", " ,", ",,", ", , ", " and ", ", and ", "and", " AND ", " And ", "&", " & ", " &", "& ", "(", ")", "((",
    "))", " (", ") ", "(1)", "((1) Univ. of X)", " (MSU)", ":", ": ", " :", ".", ". ", "..", ".,", ".:", "\\.", "\\",
    "\\'", "\\'e", "\\'{e}", "\\\"o", "\\v{s}", "\\H{o}", "\\c{c}", "\\~n", "\\^o", "\\`a", "\\=a", "\\.z", "\\u{g}",
    "\\k{a}", "\\r{a}", "\\t{oo}", "{\\O}", "\\O ", "\\o", "\\ss", "\\ss{}", "\\l", "\\L{}", "\\AA", "{\\aa}", "\\ae",
    "\\i", "{\\i}", "\\j ", "{\\j}", "/\\'{\\i}", "\\alpha", "\\Omega ", "\\mu{}", "\\dag", "\\S", "{", "}", "{}",
    "{{", "}}", "{{Zoe}}", "{{{x}}}", "]", "[", " Jr", " Jr.", ", Jr", ", Jr.", "Jr", "Jr.", " Sr", " Sr.", " III",
    " II", " I", " IV", " V", " iv", " jr", " sr.", " ı", " ſr", "et al", "et al.", "Et Al.", "et. al", " et al.",
    "etal", "et  al", "Collaboration", " Collaboration", " collaboration", " Group", " group", " TEAM", " team",
    "The ATLAS Collaboration", "CMS-TOTEM Collaboration", "LHCb collaboration:", "team2 Group", "van ", "der ",
    "de ", "la ", "von ", "del ", "della ", "da ", "mac ", "ter ", "dem ", "di ", "vaziri ", "Van ", "van der ",
    "de la ", "A.", "B.W", "V.E.", "J.-P.", "C.-P.", "Smith", "Jones", "Ivanov", "Müller", "Øbro", "Ńi", "José",
    "李", "Ünal", "Şahin", "ǅ", "İlker", " ", "  ", "\t", "\n", " \n ", "\u00a0", "\u2003", "\u3000", "\x1c", "\x85",
    "-", "'", "\"", "0", "42", "x", "e", "E", "t", "al", "ae", "s", "i", "v", "r", "R",
]


def _random_authors(chooser: random.Random) -> str:
    return "".join(chooser.choice(_PIECES) for _ in range(chooser.randint(0, 24)))


def _differing(seed: int, count: int) -> list[tuple[str, list[str], list[str]]]:
    chooser = random.Random(seed)
    differing = []
    for _ in range(count):
        authors = _random_authors(chooser)
        if author_names(authors) != reference.author_names(authors):
            differing.append((authors, author_names(authors), reference.author_names(authors)))
        if tex_to_unicode(authors) != reference.tex_to_unicode(authors):  # (its patterns are compiled once now)
            differing.append((authors, [tex_to_unicode(authors)], [reference.tex_to_unicode(authors)]))
    return differing


def test_random_tricky_authors_strings_give_the_names_of_the_parse_as_first_written() -> None:
    assert _differing(15, 20_000) == []


@pytest.mark.slow
def test_many_random_tricky_authors_strings_give_the_names_of_the_parse_as_first_written() -> None:
    assert _differing(2026, 200_000) == []


def test_the_random_strings_reach_every_rule() -> None:
    """The random strings are no easy case: among the first thousand some hold affiliations, a collaboration, a
    suffix, TeX, an "et al" and a joined "Jr" (each changing the names from a plain split at commas)."""
    chooser = random.Random(15)
    strings = [_random_authors(chooser) for _ in range(1000)]
    names = [author_names(authors) for authors in strings]
    assert sum(any(name.endswith("Collaboration") or name.lower().endswith(("group", "team")) for name in found)
               for found in names) > 20
    assert sum("\\" in authors and found != [] for authors, found in zip(strings, names, strict=True)) > 200
    assert sum(any("ø" in name or "é" in name for name in found) for found in names) > 20
    assert sum(", Jr" in authors for authors in strings) > 20
