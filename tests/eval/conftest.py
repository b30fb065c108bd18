"""Eval tests run ``deskpilot eval`` as users do; their fixtures (``deskpilot_eval``,
``proof``, ``serial``) and helpers live in :mod:`tests.eval_runs`, a plugin, so that the proof
starts with the session, beside every other test."""
