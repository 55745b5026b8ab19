"""Bradley-Terry strengths from pairwise battles, with bootstrap tournaments over queries.

Model (Bradley & Terry 1952; Hunter 2004): P(i beats j) = 1 / (1 + exp(-(s_i - s_j))) with
natural-log strengths ``s`` centred at 0. The fit maximises the penalised log-likelihood

    sum_{i,j} W_ij * log sigmoid(s_i - s_j)  -  alpha * sum_i s_i^2

where ``W_ij`` counts the battles ``i`` won against ``j``. Ties are dropped (MIRAGE-Bench) or
counted as half a win for each side (``ties="half"``). The small ridge ``alpha`` (same convention
as ``choix.opt_pairwise``; a N(0, 1/(2 alpha)) prior on each strength) keeps the estimate finite
when a model never wins or never loses, where the plain maximum-likelihood estimate does not exist
(Ford 1957: it exists iff the "beats" graph is strongly connected). With the default 0.01 the
shrinkage is below 1e-4 of a strength for arenas of MIRAGE's size (a model has thousands of
battles); a model that loses every battle lands around -10 instead of minus infinity. ``alpha=0``
gives the exact MLE and raises when it does not exist.

Bootstrap "tournaments" (MIRAGE §4.3) resample the *queries* with replacement and refit; the
leaderboard reports the mean over tournaments, its 2.5/97.5 percentiles and the rank of the mean.
All tournaments are fitted at once: per-query win matrices are summed with the resampling counts
in one matrix product and a batched, damped Newton method solves every tournament together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from .numerics import ArenaError, competition_ranks

Winner = Literal["A", "B", "tie"]
TieMode = Literal["drop", "half"]

DEFAULT_ALPHA = 0.01
DEFAULT_TOURNAMENTS = 200
_WINNERS: tuple[str, ...] = get_args(Winner)
_TIE_MODES: tuple[str, ...] = get_args(TieMode)


@dataclass(frozen=True, slots=True)
class Battle:
    """One judged comparison: ``model_a`` was shown first; ``winner`` is "A", "B" or "tie"."""

    query_id: str
    model_a: str
    model_b: str
    winner: Winner

    def __post_init__(self) -> None:
        if self.winner not in _WINNERS:
            raise ArenaError(f"battle {self.query_id!r} ({self.model_a} vs {self.model_b}): winner "
                             f"{self.winner!r} is not one of {list(_WINNERS)}")
        if self.model_a == self.model_b:
            raise ArenaError(f"battle {self.query_id!r}: model {self.model_a!r} plays against itself; "
                             "a battle needs two different models")


@dataclass(frozen=True, slots=True, eq=False)
class BattleCounts:
    """Battles aggregated to win counts per (query, ordered model pair).

    ``cell_query[k]``, ``cell_index[k]`` (``i * M + j``) and ``cell_wins[k]``: the (weighted) wins
    of ``models[i]`` over ``models[j]`` on ``query_ids[cell_query[k]]``, one entry per pair that
    played on the query (at most one per battle, usually far fewer); ties add 0.5 to both cells in
    "half" mode and nothing in "drop" mode. ``wins`` gives the dense ``(Q, M, M)`` form (memory
    ``Q * M * M`` floats; the fit itself never builds it)."""

    models: tuple[str, ...]
    query_ids: tuple[str, ...]
    cell_query: NDArray[np.int64]
    cell_index: NDArray[np.int64]
    cell_wins: NDArray[np.float64]
    battles: NDArray[np.int64]  # battles per model (ties included)
    ties: NDArray[np.int64]  # ties per model
    tie_mode: TieMode

    @property
    def wins(self) -> NDArray[np.float64]:
        """``wins[q, i, j]``: the dense per-query win tensor."""
        m = len(self.models)
        out = np.zeros((len(self.query_ids), m * m), dtype=np.float64)
        out[self.cell_query, self.cell_index] = self.cell_wins
        return out.reshape(len(self.query_ids), m, m)

    @property
    def total(self) -> NDArray[np.float64]:
        """Wins summed over queries, shape (M, M)."""
        m = len(self.models)
        return np.asarray(np.bincount(self.cell_index, weights=self.cell_wins, minlength=m * m).reshape(m, m),
                          dtype=np.float64)

    def resampled(self, mult: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(T, M, M)`` win matrices of ``T`` bootstrap tournaments: query ``q`` counted
        ``mult[t, q]`` times in tournament ``t`` (the sum over queries of ``mult[t, q] * wins[q]``,
        computed on the aggregated cells, one model pair at a time: memory ``T`` x the queries of
        one pair)."""
        m = len(self.models)
        out = np.zeros((mult.shape[0], m * m), dtype=np.float64)
        order = np.argsort(self.cell_index, kind="stable")
        cells, starts = np.unique(self.cell_index[order], return_index=True)
        ends = np.append(starts[1:], len(order))
        for cell, lo, hi in zip(cells.tolist(), starts.tolist(), ends.tolist(), strict=True):
            rows = order[lo:hi]
            out[:, cell] = mult[:, self.cell_query[rows]] @ self.cell_wins[rows]
        return out.reshape(mult.shape[0], m, m)


def battle_counts(battles: Iterable[Battle], *, ties: TieMode = "drop",
                  models: Sequence[str] | None = None) -> BattleCounts:
    """Tabulate battles per query and ordered model pair. ``models`` fixes the model order
    (default: sorted names); every model it names must play at least once and every battle must
    use only those models."""
    if ties not in _TIE_MODES:
        raise ArenaError(f"ties={ties!r}; expected one of {list(_TIE_MODES)}")
    blist = list(battles)
    if not blist:
        raise ArenaError("no battles to fit: the judge produced no usable verdict (see the judge "
                         "reliability figures for parse failures and errors)")
    for n, b in enumerate(blist):
        if not isinstance(b, Battle):
            raise ArenaError(f"battles[{n}] is a {type(b).__name__}; expected a Battle")
    seen = sorted({b.model_a for b in blist} | {b.model_b for b in blist})
    if models is None:
        names = tuple(seen)
    else:
        names = tuple(models)
        if len(set(names)) != len(names):
            raise ArenaError(f"models {list(names)} contain duplicates")
        unknown = sorted(set(seen) - set(names))
        if unknown:
            raise ArenaError(f"battles involve models {unknown} that are not in models={list(names)}")
        idle = sorted(set(names) - set(seen))
        if idle:
            raise ArenaError(f"models {idle} have no battles; a strength needs at least one battle "
                             "(did all of their answers or judge calls fail?)")
    if len(names) < 2:
        raise ArenaError(f"a Bradley-Terry fit needs at least 2 models; got {list(names)}")
    midx = {m: i for i, m in enumerate(names)}
    qids = tuple(sorted({b.query_id for b in blist}))
    qidx = {q: i for i, q in enumerate(qids)}
    q = np.fromiter((qidx[b.query_id] for b in blist), dtype=np.int64, count=len(blist))
    a = np.fromiter((midx[b.model_a] for b in blist), dtype=np.int64, count=len(blist))
    bb = np.fromiter((midx[b.model_b] for b in blist), dtype=np.int64, count=len(blist))
    code = np.fromiter((_WINNERS.index(b.winner) for b in blist), dtype=np.int64, count=len(blist))
    m = len(names)
    is_a, is_b, is_tie = code == 0, code == 1, code == 2
    parts_q = [q[is_a], q[is_b]]
    parts_c = [a[is_a] * m + bb[is_a], bb[is_b] * m + a[is_b]]
    parts_w = [np.ones(int(is_a.sum())), np.ones(int(is_b.sum()))]
    if ties == "half":
        parts_q += [q[is_tie], q[is_tie]]
        parts_c += [a[is_tie] * m + bb[is_tie], bb[is_tie] * m + a[is_tie]]
        parts_w += [np.full(int(is_tie.sum()), 0.5)] * 2
    cq, cc, cw = np.concatenate(parts_q), np.concatenate(parts_c), np.concatenate(parts_w)
    # one entry per (query, cell): the aggregation that makes 1M battles a few hundred thousand cells
    key = cq * (m * m) + cc
    uniq, inverse = np.unique(key, return_inverse=True)
    agg = np.bincount(inverse, weights=cw, minlength=len(uniq))
    n_battles = np.bincount(a, minlength=m) + np.bincount(bb, minlength=m)
    n_ties = np.bincount(a[is_tie], minlength=m) + np.bincount(bb[is_tie], minlength=m)
    return BattleCounts(models=names, query_ids=qids, cell_query=(uniq // (m * m)).astype(np.int64),
                        cell_index=(uniq % (m * m)).astype(np.int64), cell_wins=agg.astype(np.float64),
                        battles=n_battles, ties=n_ties, tie_mode=ties)


def _log_posterior(theta: NDArray[np.float64], wins: NDArray[np.float64],
                   alpha: NDArray[np.float64]) -> NDArray[np.float64]:
    diff = theta[:, :, None] - theta[:, None, :]
    # log sigmoid(d) = -log(1 + exp(-d)), stable for large |d|
    ll = -(wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))
    return np.asarray(ll - alpha * np.sum(theta**2, axis=1), dtype=np.float64)


def _strongly_connected(wins: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per batch: is the directed graph i -> j (i beat j) strongly connected?"""
    m = wins.shape[-1]
    reach = (wins > 0) | np.eye(m, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(m))))):
        reach = np.matmul(reach.astype(np.float64), reach.astype(np.float64)) > 0
    return np.asarray(reach.all(axis=(1, 2)))


def fit_strengths(wins: NDArray[np.float64], *, alpha: float = DEFAULT_ALPHA, tol: float = 1e-10,
                  max_iter: int = 200) -> NDArray[np.float64]:
    """Penalised Bradley-Terry strengths for one win matrix ``(M, M)`` or a batch ``(T, M, M)``.

    ``wins[..., i, j]`` is the (possibly fractional) number of wins of model i over model j.
    Returns natural-log strengths of shape ``(M,)`` / ``(T, M)``, each row centred at 0.
    Damped Newton with backtracking on the concave log-posterior (scaled per battle, in the
    zero-mean subspace), vectorised over the batch; a tournament stops when its step is below
    ``tol`` or stops shrinking at the rounding floor (below 1e-8).
    """
    w = np.asarray(wins, dtype=np.float64)
    single = w.ndim == 2
    if single:
        w = w[None]
    if w.ndim != 3 or w.shape[1] != w.shape[2] or w.shape[1] < 2:
        raise ArenaError(f"wins must have shape (M, M) or (T, M, M) with M >= 2; got {np.shape(wins)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ArenaError("wins must be finite and non-negative")
    if not (alpha >= 0.0 and np.isfinite(alpha)):
        raise ArenaError(f"alpha={alpha!r}; expected a finite number >= 0 (default {DEFAULT_ALPHA})")
    t_count, m, _ = w.shape
    if alpha == 0.0:
        ok = _strongly_connected(w)
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            never_win = np.flatnonzero(w[bad].sum(axis=1) == 0).tolist()
            never_lose = np.flatnonzero(w[bad].sum(axis=0) == 0).tolist()
            raise ArenaError(
                "the maximum-likelihood strengths do not exist with alpha=0: the win graph is not "
                f"strongly connected (tournament {bad}; model indices never winning {never_win}, "
                f"never losing {never_lose}); use alpha > 0 (default {DEFAULT_ALPHA})")
    # Conditioning: each tournament's log-posterior is divided by its number of battles (the
    # penalty with it, so the optimum is the same): gradients and curvatures are then O(1) however
    # many battles there are, and the convergence test means the same at 1k and 1M battles.
    battles = 0.5 * (w.sum(axis=(1, 2)) + np.swapaxes(w, 1, 2).sum(axis=(1, 2)))
    scale = np.where(battles > 0, battles, 1.0)
    ws = w / scale[:, None, None]
    a_s = alpha / scale
    n = ws + np.swapaxes(ws, 1, 2)
    won = ws.sum(axis=2)
    eye = np.eye(m)
    # The likelihood is invariant to adding a constant to every strength and the ridge optimum has
    # mean 0 (the likelihood gradient sums to 0, so at the optimum 2 alpha sum(s) = 0): the Newton
    # steps are taken in the zero-mean subspace. Adding 11^T/m makes the Hessian regular along the
    # all-ones direction without changing a zero-mean step; projecting the gradient removes its
    # rounding noise along that direction, which the tiny ridge alone (curvature 2 alpha) would turn
    # into steps that never shrink below ~1e-10 on 100k+ battles (issue 21).
    fix = np.full((m, m), 1.0 / m)
    theta = np.zeros((t_count, m))
    active = np.ones(t_count, dtype=bool)
    previous = np.full(t_count, np.inf)
    size = np.zeros(t_count)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        th, wi, ni, ai = theta[idx], ws[idx], n[idx], a_s[idx]
        f = _log_posterior(th, wi, ai)
        p = 1.0 / (1.0 + np.exp(-(th[:, :, None] - th[:, None, :])))
        grad = won[idx] - (ni * p).sum(axis=2) - 2.0 * ai[:, None] * th
        grad -= grad.mean(axis=1, keepdims=True)
        h = ni * p * (1.0 - p)
        hess = h.sum(axis=2)[:, :, None] * eye - h + (2.0 * ai)[:, None, None] * eye + fix
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step -= step.mean(axis=1, keepdims=True)
        step_size = np.abs(step).max(axis=1)
        slope = (grad * step).sum(axis=1)
        t = np.ones(idx.size)
        for _ in range(60):
            fc = _log_posterior(th + t[:, None] * step, wi, ai)
            good = fc >= f + 1e-4 * t * slope - 1e-12 * np.abs(f)
            if good.all():
                break
            t = np.where(good, t, 0.5 * t)
        theta[idx] = th + t[:, None] * step
        size[idx] = step_size
        # converged: the step is below tol, or it stopped shrinking at the rounding floor
        done = (step_size < tol) | ((step_size < 1e-8) & (step_size >= 0.5 * previous[idx]))
        previous[idx] = step_size
        active[idx[done]] = False
    else:
        if active.any():
            raise ArenaError(f"Bradley-Terry fit did not converge in {max_iter} Newton steps "
                             f"(largest last step {float(size[active].max()):.3g}); the battles may be degenerate")
    theta = theta - theta.mean(axis=1, keepdims=True)
    return np.asarray(theta[0] if single else theta, dtype=np.float64)


def resample_counts(n_queries: int, tournaments: int, seed: int) -> NDArray[np.float64]:
    """``(tournaments, n_queries)`` multiplicities of each query in bootstrap samples drawn with
    replacement (each row sums to ``n_queries``), from ``numpy.random.default_rng(seed)``."""
    if tournaments < 1:
        raise ArenaError(f"tournaments={tournaments}; expected at least 1 (default {DEFAULT_TOURNAMENTS})")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_queries, size=(tournaments, n_queries))
    flat = (idx + np.arange(tournaments)[:, None] * n_queries).ravel()
    return np.bincount(flat, minlength=tournaments * n_queries).reshape(tournaments, n_queries).astype(np.float64)


def bootstrap_strengths(counts: BattleCounts, *, tournaments: int = DEFAULT_TOURNAMENTS, seed: int = 0,
                        alpha: float = DEFAULT_ALPHA) -> NDArray[np.float64]:
    """``(tournaments, M)`` strengths, one row per bootstrap tournament over resampled queries."""
    mult = resample_counts(len(counts.query_ids), tournaments, seed)
    return fit_strengths(counts.resampled(mult), alpha=alpha)


@dataclass(frozen=True, slots=True)
class ModelStrength:
    """One leaderboard row. ``strength`` is the mean over bootstrap tournaments (as MIRAGE reports),
    ``mle`` the fit on all battles; ``rank`` orders ``strength`` (1 = best, ties share a rank)."""

    model: str
    strength: float
    ci_low: float
    ci_high: float
    rank: int
    mle: float
    battles: int
    ties: int


@dataclass(frozen=True, slots=True, eq=False)
class Leaderboard:
    """Bradley-Terry leaderboard with bootstrap intervals. ``samples[t, k]`` is the strength of
    ``names[k]`` in tournament ``t`` (names in sorted order, ``rows`` in rank order)."""

    rows: tuple[ModelStrength, ...]
    names: tuple[str, ...]
    samples: NDArray[np.float64]
    tournaments: int
    seed: int
    alpha: float
    ties: TieMode
    level: float
    n_battles: int
    n_queries: int

    def by_model(self) -> dict[str, ModelStrength]:
        return {r.model: r for r in self.rows}

    def strengths(self) -> dict[str, float]:
        return {r.model: r.strength for r in self.rows}

    def to_json(self, suite: str, lang: str) -> list[dict[str, Any]]:
        """Rows for the JSON report's ``"arena"`` list (``lang="all"`` for the suite-level fit)."""
        return [{"suite": suite, "lang": lang, "model": r.model, "strength": r.strength,
                 "ci_low": r.ci_low, "ci_high": r.ci_high, "rank": r.rank} for r in self.rows]


def _require_mle(counts: BattleCounts, alpha: float) -> None:
    """With alpha=0 name the models whose strength would be infinite, before fitting."""
    if alpha != 0.0:
        return
    total = counts.total
    never_win = [m for k, m in enumerate(counts.models) if total[k].sum() == 0]
    never_lose = [m for k, m in enumerate(counts.models) if total[:, k].sum() == 0]
    if never_win or never_lose or not _strongly_connected(total[None])[0]:
        raise ArenaError(
            "the maximum-likelihood strengths do not exist with alpha=0 (the win graph is not strongly "
            f"connected): never winning {never_win}, never losing {never_lose}; use alpha > 0 "
            f"(default {DEFAULT_ALPHA})")


def bradley_terry(battles: Iterable[Battle], *, tournaments: int = DEFAULT_TOURNAMENTS, seed: int = 0,
                  ties: TieMode = "drop", alpha: float = DEFAULT_ALPHA, level: float = 0.95,
                  models: Sequence[str] | None = None) -> Leaderboard:
    """Fit Bradley-Terry on ``battles`` and bootstrap ``tournaments`` over queries (seeded).

    Returns the leaderboard: per model the bootstrap mean strength, the ``level`` percentile
    interval, the rank of the mean, the full-data MLE and battle counts.
    """
    if not 0.0 < level < 1.0:
        raise ArenaError(f"level={level}; expected a confidence level in (0, 1), e.g. 0.95")
    counts = battle_counts(battles, ties=ties, models=models)
    if counts.total.sum() == 0:
        raise ArenaError("every battle is a tie and ties='drop': nothing to fit; use ties='half'")
    _require_mle(counts, alpha)
    mle = fit_strengths(counts.total, alpha=alpha)
    samples = bootstrap_strengths(counts, tournaments=tournaments, seed=seed, alpha=alpha)
    mean = samples.mean(axis=0)
    lo, hi = np.percentile(samples, [50.0 * (1.0 - level), 50.0 * (1.0 + level)], axis=0)
    ranks = competition_ranks(mean.tolist())
    rows = [ModelStrength(model=name, strength=float(mean[k]), ci_low=float(lo[k]), ci_high=float(hi[k]),
                          rank=ranks[k], mle=float(mle[k]), battles=int(counts.battles[k]),
                          ties=int(counts.ties[k]))
            for k, name in enumerate(counts.models)]
    rows.sort(key=lambda r: (r.rank, r.model))
    return Leaderboard(rows=tuple(rows), names=counts.models, samples=samples, tournaments=tournaments,
                       seed=seed, alpha=alpha, ties=ties, level=level,
                       n_battles=int(counts.battles.sum() // 2), n_queries=len(counts.query_ids))


def mle_strengths(battles: Iterable[Battle], *, ties: TieMode = "drop", alpha: float = DEFAULT_ALPHA,
                  models: Sequence[str] | None = None) -> dict[str, float]:
    """Bradley-Terry strengths fitted on all battles (no bootstrap), by model name."""
    counts = battle_counts(battles, ties=ties, models=models)
    _require_mle(counts, alpha)
    est = fit_strengths(counts.total, alpha=alpha)
    return {name: float(est[k]) for k, name in enumerate(counts.models)}

