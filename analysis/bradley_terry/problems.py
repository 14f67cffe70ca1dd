"""What stops a fit: malformed item indices, and data for which some estimates are not finite."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph


def _quote(names, members) -> str:
    return ", ".join(f"'{names[m]}'" for m in members)


def find_problems(win_matrix: np.ndarray, reference: int, names: list[str]) -> tuple[list[str], np.ndarray]:
    """Words about what stops finite ML estimates, and which items can be estimated.

    Finite estimates exist exactly for the items in the reference's strongly connected
    component of the "beat" graph (Ford 1957); every other item is +/-infinity or not
    comparable with the reference.
    """
    if _surely_strongly_connected(win_matrix > 0):
        return [], np.ones(len(names), bool)
    graph = sparse.csr_matrix(win_matrix > 0)
    n_strong, strong = csgraph.connected_components(graph, directed=True, connection="strong")
    if n_strong == 1:  # the usual case: every item beats and is beaten along some chain
        return [], np.ones(len(names), bool)
    played, weak, problems = _unplayed_and_disconnected(graph, names, reference)
    estimable = strong == strong[reference]
    above = _reachable(graph.T, reference)  # items with a chain of wins down to the reference
    below = _reachable(graph, reference)
    for component in np.unique(strong[(weak == weak[reference]) & ~estimable]):
        members = np.flatnonzero(strong == component)
        problems.append(
            _infinite_message(win_matrix, members, names=names, reference=reference, above=above, below=below)
        )
    return problems, estimable & played


def _unplayed_and_disconnected(
    graph, names, reference, outside: str = "get no estimate"
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Items with comparisons, weak component labels, and words about unplayed items and components."""
    played = np.asarray((graph + graph.T).sum(axis=1)).ravel() > 0
    n_weak, weak = csgraph.connected_components(graph, directed=True, connection="weak")
    problems = [f"'{names[k]}' has no comparisons: its ability cannot be estimated." for k in np.flatnonzero(~played)]
    groups = [np.flatnonzero(weak == c) for c in range(n_weak)]
    groups = [g for g in groups if played[g].any()]
    if len(groups) > 1:
        listed = "; ".join("{" + _quote(names, g) + "}" for g in groups)
        problems.append(
            f"The comparison graph is disconnected ({len(groups)} components: {listed}). Items outside "
            f"the component of '{names[reference]}' cannot be compared with it and {outside}."
        )
    return played, weak, problems


def bias_reduced_problems(
    win_matrix: np.ndarray, reference: int, names: list[str]
) -> tuple[list[str], np.ndarray, list[np.ndarray]]:
    """What a bias-reduced fit can estimate: words, the items given a free ability, and unlinked groups.

    Firth estimates are finite across the whole connected component of the reference, so only
    unplayed items and other components remain. As R's glm does for the aliased columns, each
    other component's last item (in item order) is held at 0 and its other members are
    estimated relative to it; each such group is returned, anchor last.
    """
    graph = sparse.csr_matrix(win_matrix > 0)
    outside = "are estimated only relative to the last item of their own component, as R reports them"
    played, weak, problems = _unplayed_and_disconnected(graph, names, reference, outside)
    fitted = played.copy()
    groups = []
    for label in np.unique(weak[played]):
        members = np.flatnonzero((weak == label) & played)
        if label != weak[reference] and len(members) > 1:
            fitted[members[-1]] = False
            groups.append(members)
        elif label != weak[reference]:
            fitted[members] = False
    problems.extend(_finite_only_with_bias_reduction(graph, weak == weak[reference], reference, names))
    return problems, fitted, groups


def _finite_only_with_bias_reduction(graph, linked, reference, names) -> list[str]:
    _, strong = csgraph.connected_components(graph, directed=True, connection="strong")
    infinite = np.flatnonzero(linked & (strong != strong[reference]))
    if infinite.size == 0:
        return []
    return [
        f"Bias reduction (Firth) gives finite estimates to {_quote(names, infinite)}, whose maximum-likelihood "
        f"estimates relative to '{names[reference]}' are infinite (some items never win or never lose along "
        "the way): these values are pulled towards 0 by the method, not measured."
    ]


def _surely_strongly_connected(beats: np.ndarray, max_steps: int = 8) -> bool:
    """True when every item reaches item 0 and is reached from it within `max_steps` links of
    the dense "beat" graph; False means "not shown here" and csgraph decides."""
    if len(beats) == 0:
        return False
    for graph in (beats, beats.T):
        seen = graph[0].copy()
        seen[0] = True
        for _ in range(max_steps):
            grown = seen | graph[seen].any(axis=0)
            if grown.all():
                break
            if (grown == seen).all():
                return False
            seen = grown
        else:
            return False
    return True


def _reachable(graph, start: int) -> np.ndarray:
    order = csgraph.breadth_first_order(graph, start, directed=True, return_predecessors=False)
    mask = np.zeros(graph.shape[0], bool)
    mask[order] = True
    return mask


def _infinite_message(
    win_matrix: np.ndarray,
    members: np.ndarray,
    *,
    names: list[str],
    reference: int,
    above: np.ndarray,
    below: np.ndarray,
) -> str:
    who = _quote(names, members)
    if len(members) == 1 and win_matrix[members[0]].sum() == 0:
        return f"{who} never wins: its ability is minus infinity; its estimate is left empty."
    if len(members) == 1 and win_matrix[:, members[0]].sum() == 0:
        return f"{who} never loses: its ability is plus infinity; its estimate is left empty."
    ref = names[reference]
    if above[members[0]]:
        return (
            f"{who} never lose to the items they are ranked against on the way to '{ref}': their "
            f"abilities relative to '{ref}' are plus infinity; their estimates are left empty."
        )
    if below[members[0]]:
        return (
            f"{who} never beat the items that link them to '{ref}': their abilities relative to "
            f"'{ref}' are minus infinity; their estimates are left empty."
        )
    return f"{who} cannot be placed relative to '{ref}' (all links pass through infinite gaps); estimates left empty."


def _check_indices(winners: np.ndarray, losers: np.ndarray, n_items: int) -> None:
    """One reduction per int64 array: read as unsigned, a negative index is huge, so max < n checks both ends."""
    if winners.size and max(winners.view(np.uint64).max(), losers.view(np.uint64).max()) >= n_items:
        raise ValueError(f"item indices must lie in 0..{n_items - 1}.")
