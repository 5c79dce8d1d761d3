"""Development-only code that does not ship in the `orchestra` package.

* `orchestra_dev.corpus`: the generator of the bundled scenario corpus (needs `faker`, from the
  `test` extra); run through `scripts/build_corpus.py` and `scripts/build_starter_scenarios.py`.
* `orchestra_dev.local_llm`: the local llama.cpp model the integration tests run (the
  `local-llm` extra): assembling its weights, starting its server.

`devtools/` is on the tests' `pythonpath` (pyproject) and the scripts add it themselves; importing
`orchestra` never needs anything here.
"""
