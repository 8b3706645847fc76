"""mkdocs-gen-files script: writes the generated reference into the site being built (nothing lands in docs/).

The pages themselves come from docs/gen/reference.py. A hand-written page may hold a line
`<!-- gen:NAME -->`: it is replaced here by the generated snippet NAME (see SNIPPETS), so prose and
generated tables share a page while the file on disk stays readable on its own.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import mkdocs_gen_files

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("lerobot_ros_docs_reference", HERE / "reference.py")
reference = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = reference  # dataclasses look their module up there
_spec.loader.exec_module(reference)

MARKER = re.compile(r"^<!-- gen:([a-z0-9-]+) -->$", re.MULTILINE)

pages = reference.all_pages()
SNIPPETS = {
    "qa-figures": pages.pop("explanation/recorder-qa-figures.md"),
    "contract-topics": pages.pop("reference/contract-topics.md"),
    **{
        f"{folder}-pages": pages.pop(f"{folder}/pages-of-this-folder.md")
        for folder in ("how-to", "explanation", "tutorials")
    },
    "vocabulary": reference.vocabulary_table(),
    "renamed-flags": reference.renamed_flags_table(),
    "exit-codes": reference.exit_codes_table(),
}

for path, content in pages.items():
    if isinstance(content, bytes):
        with mkdocs_gen_files.open(path, "wb") as f:
            f.write(content)
    else:
        with mkdocs_gen_files.open(path, "w") as f:
            f.write(content)


# hand-written pages with generated parts
def fill(page: Path, text: str) -> str:
    """`text` with each `<!-- gen:NAME -->` line replaced by the snippet NAME."""

    def snippet(m: re.Match) -> str:
        name = m.group(1)
        if name not in SNIPPETS:
            raise KeyError(f"{page}: unknown generated snippet {name!r} (known: {', '.join(SNIPPETS)})")
        return SNIPPETS[name].rstrip("\n")

    return MARKER.sub(snippet, text)


for page in sorted(HERE.parent.rglob("*.md")):
    text = page.read_text(encoding="utf-8")
    if MARKER.search(text):
        with mkdocs_gen_files.open(str(page.relative_to(HERE.parent)), "w") as f:
            f.write(fill(page, text))
