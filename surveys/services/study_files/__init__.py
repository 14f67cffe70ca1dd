"""Study files: the JSON format of docs/study-files.md, read by `import_study` and written by `export_study`.

The format is defined once, as typed models (`format.py`); reading checks a file against them and names
the place of every problem (`reading.py`), importing writes what they hold (`importing.py`) and
exporting writes the stored study back through them (`exporting.py`).

Re-importing a slug that already exists updates that study in place while it is a draft: items are
matched by key, changed where the file differs, added where new and removed where the file no longer
has them; answers are matched by system × vignette × sample. A live or closed study is never changed by
an import (its judges' pages must not shift under them): the import is refused.
"""

from .exporting import export_study
from .importing import import_study
from .reading import (
    StudyFileError,
    check_file_size,
    check_study_file,
    parse_study_file,
    read_study_file,
    read_study_upload,
)

__all__ = [
    "StudyFileError",
    "check_file_size",
    "check_study_file",
    "export_study",
    "import_study",
    "parse_study_file",
    "read_study_file",
    "read_study_upload",
]
