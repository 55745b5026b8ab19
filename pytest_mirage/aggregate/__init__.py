"""From case results to verdicts: threshold and gate rules (syntax, precedence, evaluation) and the
gate statistics they compute over groups of cases."""
