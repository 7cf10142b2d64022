"""Incident notifications."""
