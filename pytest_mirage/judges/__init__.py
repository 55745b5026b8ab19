"""Model-backed scorers: LLM judges (pairwise arena, pointwise) and local-model judges.

Submodules are imported explicitly (``from pytest_mirage.judges.pairwise import ...``) so that
importing this package loads no model library.
"""
