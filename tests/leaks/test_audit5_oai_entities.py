"""Audit 5: the fast OAI-PMH reader and the careful one (``adapters/arxiv/ingest.py``) on a response that declares
entities (a DOCTYPE with an internal subset, external general and parameter entities, an external DTD), CDATA,
character references, processing instructions, comments and an XInclude element in a title.

Held on main (checked here so that it stays so): no external entity, DTD or XInclude is ever read (a file that
names one is not opened; the record using it is reported, or the reference is left out), an internal entity is
expanded alike by both readers, and the fast reader gives exactly the careful reader's records, problems and
errors on every variant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frozen_search.adapters.arxiv import ingest
from tests.arxiv.test_oai_fast_reader import LISTRECORDS, _careful, _read
from tests.conftest import realdata

SECRET = "POSTCUTOFF_MARKER_77"


def _variants(secret: Path) -> list[tuple[str, str]]:
    real = realdata(*LISTRECORDS).read_text(encoding="utf-8")
    root = real.index("<OAI-PMH")
    prolog, body = real[:root], real[root:]
    first, last = body.index("<title>") + 7, body.rindex("<title>") + 7
    uri = secret.as_uri()

    def variant(doctype: str, inserted: str, at: int = first) -> str:
        return prolog + doctype + body[:at] + inserted + body[at:]

    return [
        ("external general entity", variant(f'<!DOCTYPE OAI-PMH [<!ENTITY x SYSTEM "{uri}">]>', "&x; ")),
        ("external entity in the last record", variant(f'<!DOCTYPE OAI-PMH [<!ENTITY x SYSTEM "{uri}">]>', "&x; ",
                                                       last)),
        ("external parameter entity", variant(f'<!DOCTYPE OAI-PMH [<!ENTITY % p SYSTEM "{uri}"> %p;]>', "")),
        ("external DTD", variant(f'<!DOCTYPE OAI-PMH SYSTEM "{uri}">', "")),
        ("network entity", variant('<!DOCTYPE OAI-PMH [<!ENTITY x SYSTEM "http://192.0.2.1/x">]>', "&x; ")),
        ("internal entity", variant('<!DOCTYPE OAI-PMH [<!ENTITY x "Entity text">]>', "&x; ")),
        ("nested internal entities", variant('<!DOCTYPE OAI-PMH [<!ENTITY a "ab"><!ENTITY b "&a;&a;&a;">]>', "&b; ")),
        ("CDATA", variant("", "<![CDATA[a <b> & c]]> ")),
        ("character references", variant("", "&#x41;&#66;&#x1F600; ")),
        ("processing instruction", variant("", "<?pi data?>")),
        ("comment", variant("", "<!-- note -->")),
        ("XInclude", variant("", f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{uri}" '
                                 'parse="text"/>')),
    ]


@pytest.fixture(scope="module")
def secret(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("xxe") / "later.txt"
    path.write_text(SECRET, encoding="utf-8")
    return path


@pytest.mark.parametrize("index", range(12))
def test_entities_and_includes_are_never_read_from_outside_and_both_readers_agree(tmp_path: Path, secret: Path,
                                                                                index: int) -> None:
    name, text = _variants(secret)[index]
    path = tmp_path / "ListRecords.xml"
    data = text.encode("utf-8")
    fast, careful = _read(ingest._oai_stream, path, data), _read(_careful, path, data)
    assert fast == careful, name
    assert SECRET not in repr(fast), name
    assert len(fast[0]) >= 385 and fast[2] is None, name  # the file is read: at most the record using it is lost
