"""Gold: hourly health facts, the detectors that turn them into findings, and incidents."""
