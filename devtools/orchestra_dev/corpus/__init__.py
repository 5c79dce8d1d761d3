"""Deterministic generator of Gaia2-format universes and scenarios (``scripts/build_corpus.py``).

Development tooling, not part of orchestra's runtime: it needs ``faker`` (pinned) and is imported only
by the build script and the corpus tests.

* :mod:`orchestra_dev.corpus.universe` — one seeded universe: a persona and coherent cross-app data
  (contacts, emails, chats/messages, calendar, shopping catalogue and orders, cab rides, apartments,
  a file tree), plus the ``augmentation`` block the noise phase reads.
* :mod:`orchestra_dev.corpus.scenarios` — scenario templates (execution, search, adaptability, time,
  ambiguity, multi-turn) instantiated on a universe with ARE's own scenario API.
* :mod:`orchestra_dev.corpus.export` — ARE's exporter plus the fix-ups ARE 1.2.0 needs, canonical JSON,
  the manifest.
* :mod:`orchestra_dev.corpus.text` — text templates and the tool-name / tool-description maps.

Everything is seeded: no wall clock, no ``uuid4``, no ``hash()``; output is byte-identical across
runs and ``PYTHONHASHSEED`` values.
"""
