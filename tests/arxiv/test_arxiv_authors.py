"""A version's authors as arXiv's API lists them, from any input (``frozen_search/adapters/arxiv/authors.py``), and
the refusal of a store rendered otherwise (``RENDERER_ID``).

The real API (``api/arxivpy_fixtures_2026``) is arXiv's ``arxiv-search`` classic API (its feed ``<id>`` is the
base64 of the query's SHA-1 less its last character, as ``search/serialize/atom.py`` writes it): each ``<name>`` is
``"<first names> <key name>"`` of one author as arXiv parses the version's authors string. The real bulk snapshot
(``snapshot/kaggle_*.jsonl``, 200 records) carries each record's authors string *and* ``authors_parsed``, arXiv's
own parse of it (``[key name, first names, suffix, affiliations...]``); the real search documents
(``docmeta/*.json``, 25) carry both as well: the names read from the string must be those, for every record.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from lxml import etree

from frozen_search.adapters.arxiv.authors import author_names, authors_line, tex_to_unicode
from frozen_search.adapters.arxiv.ids import RENDERER_ID
from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import StoreIntegrityError
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from tests.arxiv.conftest import ATOM
from tests.conftest import realdata
from tests.leaks.formats import arxiv_raw_list, ingested, write


def _shown(parsed: list[list[str]]) -> list[str]:
    """arXiv's API name of each parsed author (arxiv-search's ``full_name``): ``"<first names> <key name>"``,
    whitespace collapsed (the suffix is left out)."""
    return [" ".join(f"{author[1]} {author[0]}".split()) for author in parsed]


def test_every_real_snapshot_record_gives_the_names_of_its_authors_parsed() -> None:
    lines = realdata("arxiv", "snapshot", "kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl") \
        .read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 200
    differing = [r["id"] for r in records if author_names(" ".join(r["authors"].split()))
                 != _shown(r["authors_parsed"])]
    assert differing == []
    written = [r for r in records if ", ".join(_shown(r["authors_parsed"])) != " ".join(r["authors"].split())]
    assert len(written) > 60  # the authors line as written differs from the API's for many ("and", TeX, affiliations)


def test_every_real_search_document_gives_the_names_of_its_authors_parsed() -> None:
    documents = []
    for path in sorted(realdata("arxiv", "docmeta").glob("*.json")):
        found = json.loads(path.read_text(encoding="utf-8"))
        documents.extend(found if isinstance(found, list) else [found])
    assert len(documents) == 25
    for document in documents:
        parsed = [[a["last_name"], a.get("first_name", ""), a.get("suffix", "")] for a in document["authors_parsed"]]
        assert author_names(document["authors"]) == _shown(parsed), document["paper_id"]


def test_the_recorded_api_is_arxiv_searchs_classic_api() -> None:
    """Each recorded answer of today's API names its query (``<title>``) and identifies it (``<id>``) as arXiv's
    ``arxiv-search`` serializer does: the base64 of the query string's SHA-1, less its last character. Its authors'
    names are therefore arxiv-search's ``full_name`` (first names and key name, no suffix)."""
    checked = 0
    for path in sorted(realdata("arxiv", "api", "arxivpy_fixtures_2026").glob("*.json")):
        feed = etree.fromstring(json.loads(path.read_text(encoding="utf-8"))["body"].encode("utf-8"))
        title = feed.findtext(f"{{{ATOM}}}title") or ""
        if not title.startswith("arXiv Query: "):
            continue  # the error answer (id_abc) is titled "arXiv Search Results"
        digest = hashlib.sha1(title[len("arXiv Query: "):].encode("utf-8")).digest()
        assert feed.findtext(f"{{{ATOM}}}id") == "https://arxiv.org/api/" + base64.b64encode(digest).decode()[:-1]
        checked += 1
    assert checked == 19


@pytest.mark.parametrize(("authors", "names"), [
    ("James M. Murray, Adrian Del Maestro and Zlatko Tesanovic",
     ["James M. Murray", "Adrian Del Maestro", "Zlatko Tesanovic"]),
    ("A. Smith, B. Jones, and C. Brown", ["A. Smith", "B. Jones", "C. Brown"]),
    ("A. Smith & B. Jones", ["A. Smith", "B. Jones"]),
    # affiliations, also numbered ones with their list at the end, are no names
    ("V. M. Biryukov (Serpukhov, IHEP)", ["V. M. Biryukov"]),
    ("Arthur Jaffe (1) and Gordon Ritter (1) ((1) Harvard University)", ["Arthur Jaffe", "Gordon Ritter"]),
    # a period gets a space after it (not in TeX)
    ("C.-P. Yuan, Richard V.E. Lovelace", ["C. -P. Yuan", "Richard V. E. Lovelace"]),
    ("Wissink B.W and Jacobs G.B.", ["Wissink B. W", "Jacobs G. B."]),
    # TeX accents and letters
    ("C. Bal\\'azs, Mikkel {\\O}bro", ["C. Balázs", "Mikkel Øbro"]),
    ("Rastislav \\v{S}r\\'amek, Bro\\v{n}a Brejov\\'a", ["Rastislav Šrámek", "Broňa Brejová"]),
    # "et al." is dropped; "Jr." after a comma is joined to the name before it, then taken as its suffix
    ("A. Smith, B. Jones, et al.", ["A. Smith", "B. Jones"]),
    ("John Smith, Jr., Ann Lee", ["John Smith,", "Ann Lee"]),  # (arXiv's parse: key name "Smith,")
    ("Thomas N. Gautier III and A. A. Alves Jr", ["Thomas N. Gautier", "A. A. Alves"]),  # the API shows no suffix
    # a leading collaboration: the letters, digits and spaces before the keyword (arXiv's pattern)
    ("The ATLAS Collaboration: A. Smith, B. Jones", ["The ATLAS Collaboration", "A. Smith", "B. Jones"]),
    ("CMS-TOTEM Collaboration", ["TOTEM Collaboration"]),
    ("", []),
])
def test_author_names_follow_arxivs_parse(authors: str, names: list[str]) -> None:
    assert author_names(authors) == names
    assert authors_line(names) == ", ".join(names)


@pytest.mark.parametrize(("tex", "text"), [
    ("Schr\\\"oder", "Schröder"), ("Schr{\\\"o}der", "Schr{ö}der"), ("\\'{E}mile", "Émile"),
    ("Erd\\H{o}s", "Erdős"), ("Ma\\l{}gorzata", "Małgorzata"), ("\\ss", "ß"), ("\\alpha", "α"),
    ("\\\"w", "w"),  # a pair arXiv has no character for keeps only the letter
    ("{{Zoe}} Smith", "{Zoe} Smith"),  # doubled braces are reduced, with or without TeX in them
    ("no TeX at all", "no TeX at all"),
])
def test_tex_to_unicode_follows_arxivs_tex2utf(tex: str, text: str) -> None:
    assert tex_to_unicode(tex) == text


CUTOFF = "2026-01-06T12:00:00Z"
PAPER = {"id": "2511.00101", "datestamp": "2026-01-08", "versions": [("v1", "Mon, 3 Nov 2025 12:00:00 GMT")],
         "title": "Marrowvale sheaves", "abstract": "Marrowvale sheaves are defined."}
OTHER = {"id": "2511.00102", "datestamp": "2026-01-08", "versions": [("v1", "Mon, 3 Nov 2025 12:00:00 GMT")],
         "title": "Quillfeather lattices", "abstract": "Quillfeather lattices are defined."}


def _fetched(data: Path, ref: str) -> str:
    service = FrozenSearchService(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF)), logging=False)
    try:
        return service.fetch(ref).text
    finally:
        service.close()


@pytest.mark.parametrize("stale", ["all", "one", "version-2"])
def test_a_store_rendered_by_an_older_build_is_refused_whole(tmp_path: Path, stale: str) -> None:
    data = ingested(tmp_path / "data", "arxiv", [write(tmp_path / "raw.xml", arxiv_raw_list([PAPER, OTHER]))])
    store = Store(data / "store.sqlite3")
    try:
        row = store.get("arxiv:2511.00101", "v1")
        assert row is not None and row.provenance["renderer"] == RENDERER_ID
    finally:
        store.close()
    assert "Marrowvale" in _fetched(data, "arxiv:2511.00101")
    db = sqlite3.connect(data / "store.sqlite3")
    with db:  # as an older build stored them: no renderer in the provenance, or version 2's (withdrawals by (0kb,I))
        if stale == "version-2":
            db.execute("UPDATE revisions SET provenance = json_set(provenance, '$.renderer', 'arxiv-version/2') "
                       "WHERE source = 'arxiv' AND doc_id = 'arxiv:2511.00102'")
        else:
            db.execute("UPDATE revisions SET provenance = json_remove(provenance, '$.renderer') WHERE source = 'arxiv'"
                       + (" AND doc_id = 'arxiv:2511.00102'" if stale == "one" else ""))
    db.close()
    for ref in ("arxiv:2511.00101", "arxiv:2511.00102", "arxiv:2511.09999"):
        with pytest.raises(StoreIntegrityError, match="rendered by an older build"):
            _fetched(data, ref)
