"""Audit: OpenAlex display names are today's (leak class 12, "current metadata").

Twin worlds on the real record W2741809807 (../shared/realdata/openalex), edited: a journal article of 2025-07-10
whose primary location carries no ``raw_source_name`` and whose authorships carry no ``raw_author_name`` (26 of the 65
real records of works_list_orcid_…json lack a ``raw_source_name``, all of them repository records today; OpenAlex
omits either field where the deposit gave none). In one world the journal was renamed after ``T`` (OpenAlex renames a
source's ``display_name`` in place) and the author changed their display name (an ORCID name change). The venue and
authors shown fell back to those display names (adapters/openalex/ids.py ``_venue``/``_authors``), so the fetch
and the search snippet differed between the worlds. Only deposited names are shown now: ``Venue: not named`` and
``1 author not named in the deposit``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.service import FrozenSearchService
from tests.conftest import realdata
from tests.leaks.formats import ingested, write
from tests.leaks.harness import observed_calls

CUTOFF = "2026-01-06"
WORK = "W4400000071"


def _record(venue: str, author: str) -> dict[str, Any]:
    work: dict[str, Any] = json.loads(realdata("openalex", "work_W2741809807_2025-06.json").read_text())
    work.update(id=f"https://openalex.org/{WORK}", doi=None, title="Pellworm spectra of graphs",
                display_name="Pellworm spectra of graphs", publication_date="2025-07-10", publication_year=2025,
                created_date="2025-07-12", abstract_inverted_index={"Pellworm": [0], "spectra": [1]},
                ids={"openalex": f"https://openalex.org/{WORK}"})
    location = copy.deepcopy(work["primary_location"])
    location.pop("raw_source_name", None)
    location["source"].update(display_name=venue, type="journal", id="https://openalex.org/S1")
    work.update(primary_location=location, locations=[location], best_oa_location=location, locations_count=1)
    authorship = copy.deepcopy(work["authorships"][0])
    authorship.pop("raw_author_name", None)
    authorship["author"]["display_name"] = author
    work["authorships"] = [authorship]
    return work


def _observed(root: Path, name: str, venue: str, author: str) -> dict[str, str]:
    path = write(root / f"{name}.json", json.dumps(_record(venue, author)))
    data = ingested(root / name, "openalex", [path])
    service = FrozenSearchService.open(Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(CUTOFF),
                                                         log_path=data / "log.jsonl"))
    try:
        return observed_calls(service, ("Pellworm spectra",), (f"openalex:{WORK}",))
    finally:
        service.close()


def test_names_changed_after_the_cutoff_do_not_reach_the_answer(tmp_path: Path) -> None:
    kept = _observed(tmp_path, "kept", "Annals of Spectral Combinatorics", "Ada Quill")
    renamed = _observed(tmp_path, "renamed", "Spectral Combinatorics Letters", "Ada Quill-Marsh")
    assert "Pellworm spectra of graphs" in kept[f"fetch openalex:{WORK}"]
    assert renamed == kept
    assert "Venue: not named" in kept[f"fetch openalex:{WORK}"]
    assert "Authors: 1 author not named in the deposit" in kept[f"fetch openalex:{WORK}"]
