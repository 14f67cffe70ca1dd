"""BradleyTerry2's published examples (tests/fixtures/bt/) and fitting them, for the tests."""

import json
from pathlib import Path

from analysis import bradley_terry as bt
from analysis.comparison_files import read_comparisons

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "bt"
PUBLISHED = json.loads((FIXTURES / "published.json").read_text())


def fit_file(name: str, reference: str, *, order: bool = False, bias_reduced: bool = False) -> bt.BTResult:
    """Fit a fixture file; `order` fits its `home` column as the order effect."""
    data = read_comparisons(FIXTURES / name, first_column="home")
    return bt.fit(
        data.winners,
        data.losers,
        len(data.item_names),
        reference=data.index_of(reference),
        counts=data.counts,
        first=data.first if order else None,
        item_names=data.item_names,
        bias_reduced=bias_reduced,
    )
