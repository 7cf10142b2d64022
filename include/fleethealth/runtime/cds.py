"""The driver's JVM options for the class-data-sharing archive (AppCDS) that set-up builds
(fleethealth.setup.class_sharing): about 5 s less per Spark JVM start. A stale archive (other jars,
other JDK) is ignored by the JVM, silently: it only costs the time it would have saved.

No Spark, no simulator here: the DAG file reads these options at parse time.
"""
from __future__ import annotations

from pathlib import Path

from fleethealth.runtime import config

ARCHIVE_NAME = "spark-cds.jsa"
# JVM log tags of class data sharing: quiet (a stale archive is not an error, only slower)
QUIET = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]


def archive_path() -> Path:
    return config.jars_dir() / ARCHIVE_NAME


def java_options() -> list[str]:
    """Driver JVM options that use the archive, or none when set-up has not built it."""
    path = archive_path()
    return [f"-XX:SharedArchiveFile={path}", *QUIET] if path.is_file() else []
