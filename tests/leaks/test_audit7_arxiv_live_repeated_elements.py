"""Audit 7: an arXiv API Atom entry writing one of its single-valued elements twice (``<updated>``, ``<published>``,
``<id>``, ``<title>``, ``<summary>``, ``<arxiv:comment>``) was read by the first (``findtext``): today's version whose
entry wrote ``<updated>`` twice, an earlier date first, was taken for the version current at ``T`` and shown with its
post-``T`` title and abstract. Audit 5 fixed the same in OAI-PMH arXivRaw (a ``<version>`` with two ``<date>``
elements is a skipped record); the Atom reader of the live adapter kept the first.

Twin worlds on the recorded real answer for 2104.12255 (``api/arxivpy_fixtures_2026``: v1 of 2021-04-20, title
"0"; cutoff 2022-01-01), live mode over an empty data dir: today's entry is that v1, or a v2 made on 2022-03-01
whose entry writes ``<updated>`` twice (2021-06-01 first, 2022-03-01 last) with a planted title and abstract. Fixed:
an entry writing such an element twice is an unusable answer (``upstream_unavailable``, as an entry without an id
or dates): which value is the entry's is not shown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.errors import FrozenSearchError
from frozen_search.service import FrozenSearchService
from tests.arxiv.conftest import ATOM, ArxivStub, load_recordings, serve

pytestmark = pytest.mark.serial  # serves the recorded API on 127.0.0.1 (arxiv_stub)

PAPER = "2104.12255"
CUTOFF = "2022-01-01"


@pytest.fixture
def arxiv_stub() -> Iterator[ArxivStub]:
    """The stub arXiv of tests/arxiv (the recorded real API answers), on 127.0.0.1."""
    stub = load_recordings()
    server = serve(stub)
    yield stub
    server.close()


def _today(stub: ArxivStub, *, later: bool) -> None:
    """What the stub answers for ``id_list=2104.12255`` (today's entry): the recorded v1, or a v2 of 2022-03-01
    whose entry writes ``<updated>`` twice, the earlier date first."""
    entry = etree.fromstring(stub.ids[f"{PAPER}v1"].body).find(f"{{{ATOM}}}entry")
    assert entry is not None
    if later:
        entry.find(f"{{{ATOM}}}id").text = f"http://arxiv.org/abs/{PAPER}v2"
        updated = entry.find(f"{{{ATOM}}}updated")
        assert updated is not None
        updated.text = "2022-03-01T10:00:00Z"
        first = etree.Element(f"{{{ATOM}}}updated")
        first.text = "2021-06-01T10:00:00Z"
        updated.addprevious(first)
        entry.find(f"{{{ATOM}}}title").text = "POSTCUTOFF_MARKER_1 Splitting zero, revised"
        entry.find(f"{{{ATOM}}}summary").text = "POSTCUTOFF_MARKER_2 revised."
    stub.entries[PAPER] = etree.tostring(entry)
    stub.ids.pop(PAPER, None)


def _fetched(root: Path, stub: ArxivStub) -> str:
    settings = Settings.from_env({}, data_dir=root, cutoff=parse_cutoff(CUTOFF), mode="live", live_sources="arxiv",
                                 arxiv_api=stub.url("/api/query"), arxiv_oai=stub.url("/oai2"))
    service = FrozenSearchService.open(settings, logging=False)
    try:
        return service.fetch(f"arxiv:{PAPER}").model_dump_json()
    except FrozenSearchError as exc:
        return str(exc)
    finally:
        service.close()


def test_the_paper_stood_at_t(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    _today(arxiv_stub, later=False)
    shown = _fetched(tmp_path / "w", arxiv_stub)
    assert "What is the funniest number in cryptography?" in shown


def test_a_later_entry_writing_updated_twice_is_not_shown_at_t(arxiv_stub: ArxivStub, tmp_path: Path) -> None:
    _today(arxiv_stub, later=True)
    shown = _fetched(tmp_path / "w", arxiv_stub)
    assert "POSTCUTOFF_MARKER" not in shown, shown
    assert shown.startswith("[upstream_unavailable]"), shown
