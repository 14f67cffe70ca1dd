"""An export as one text, read the way a download streams it (analysis.exports.export_lines)."""

from analysis.exports import export_lines


def exported(*, study, name: str, run=None) -> str:
    return "".join(export_lines(study=study, name=name, run=run))
