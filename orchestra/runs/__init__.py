"""Batches of rollouts: specs for scenario files and the executors that run them (`runner`,
`executors`), the checks before a batch (`preflight`), one resumable batch loop into a run folder
(`batch`, `run_dir`), what a run shows while it runs (`progress`), and a run's numbers and page
(`summary`, `report`)."""
