"""Setup: set-up code only — the class-data-sharing archive build, run by `make setup`.

Not imported by the pipeline (the DAG, the jobs, the CLI): it may use the simulator.
"""
