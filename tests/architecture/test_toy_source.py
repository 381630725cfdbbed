"""Adding a source is one package and one registry line: a throwaway toy source, written as a package of one file
into a temporary folder, is ingested, searched and fetched at a cutoff through the real service, with no edit to
any file of frozen_search."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

TOY_PACKAGE = '''
"""A toy source: notes in JSON lines, one state per line ({"id", "version", "at", "title", "text"})."""

from __future__ import annotations

import json

from frozen_search.adapters.documents import DocReference, DocState, DocumentStateSource, ingest_states
from frozen_search.cutoff import stored_instant


class ToySource(DocumentStateSource):
    name = "toy"
    id_examples = ("toy:1",)

    def row_sources(self, settings):
        return ("toy",)

    def hosts(self, settings):
        return ("toy.example",)

    def parse_reference(self, ref, settings):
        return DocReference(source="toy", doc_id=ref.strip()) if ref.strip().startswith("toy:") else None

    def ingest(self, paths, store, index, *, settings, progress=None, on_file=None, **options):
        def read(path, report, tick):
            for line in path.read_text().splitlines():
                note = json.loads(line)
                yield [DocState(doc_id=note["id"], source="toy", version=note["version"],
                                valid_from=stored_instant(note["at"]), title=note["title"],
                                url="https://toy.example/" + note["id"][4:],
                                parts=(note["text"],))]
        return ingest_states("toy", paths, store, index, read, progress=progress, on_file=on_file)


TOY = ToySource()
'''

SCRIPT = '''
import sys
from pathlib import Path

from frozen_search.config import Settings
from frozen_search.cutoff import parse_cutoff
from frozen_search.index import RevisionIndex
from frozen_search.registry import Registry, default_registry
from frozen_search.service import FrozenSearchService
from frozen_search.store import Store
from toysource import TOY

registry = Registry((*default_registry().sources, TOY))  # the one registry line
data = Path(sys.argv[1])
settings = Settings.from_env({}, data_dir=data)
store = Store(settings.store_path)
report = TOY.ingest([Path(sys.argv[2])], store, RevisionIndex.create(settings.index_path), settings=settings)
store.close()
print(report.summary())
for cutoff in ("2012-01-01", "2020-01-01"):
    at = Settings.from_env({}, data_dir=data, cutoff=parse_cutoff(cutoff))
    service = FrozenSearchService(at, registry=registry, logging=False)
    hits = service.search("quasigroups", source="toy").results
    print(cutoff, service.fetch("toy:1").text, [hit.id for hit in hits])
    service.close()
'''


def test_a_toy_source_is_one_package_and_one_registry_line(tmp_path: Path) -> None:
    package = tmp_path / "toysource"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(TOY_PACKAGE))
    notes = tmp_path / "notes.jsonl"
    notes.write_text("\n".join(json.dumps(n) for n in [
        {"id": "toy:1", "version": "v1", "at": 1_300_000_000, "title": "Notes", "text": "Loops, first draft."},
        {"id": "toy:1", "version": "v2", "at": 1_500_000_000, "title": "Notes", "text": "Loops and quasigroups."},
    ]))
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "data"), str(notes)], capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": f"{tmp_path}:{':'.join(sys.path)}"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ingested 2 states of 2 documents")
    assert lines[1] == "2012-01-01 Loops, first draft. []"  # v2 (2017) is after that cutoff: not found, not shown
    assert lines[2] == "2020-01-01 Loops and quasigroups. ['toy:1']"
