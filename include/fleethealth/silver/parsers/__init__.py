"""Parsers: bronze records → typed silver rows, as Spark column expressions (no Python UDFs)."""
