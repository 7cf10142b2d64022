"""The process's Great Expectations contexts: one in memory, with the Spark and pandas datasources the
suites are validated on (fleethealth.quality.suites), and one per Data Docs folder, whose stores
(<data_docs_dir>/_gx) keep the validation results behind the site and build its pages
(fleethealth.quality.docs renders them offline and prunes them).

GX is imported when a context is first asked for (it takes seconds); each is created once per process.
"""
from __future__ import annotations

import fcntl
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOCS_SITE = "fleethealth"
DOCS_STORES = "_gx"  # under data_docs_dir: GX's suite / validation-result stores behind the site
# The index links the most recent results only: GX reads every result it links at every build, so an
# index of all of them grew with history (~2 ms a result, 25 results an hour: a month's index ~35 s
# an hour). Every result keeps its page, and gold.quality_results has them all.
DOCS_INDEX_RESULTS = 100
# the site's views (fleethealth.quality.docs, imported by GX when it builds: it needs GX)
DOCS_PAGE_VIEW = {"module_name": "fleethealth.quality.docs", "class_name": "OfflinePageView"}
DOCS_INDEX_VIEW = {"module_name": "fleethealth.quality.docs", "class_name": "OfflineIndexPageView"}
lock = threading.RLock()   # held while a context is created or changed
contexts: dict[str | None, "Gx"] = {}   # by Data Docs folder (None: the one in memory)


@dataclass
class Gx:
    """One ephemeral GX context with a Spark datasource and its batch definitions per table."""

    context: Any
    datasource: Any
    batch_definitions: dict
    local_datasource: Any = None   # pandas: small tables' first pass (fleethealth.quality.suites._local_copy)

    def batch_definition(self, table: str, local: bool = False):
        with lock:
            key = (table, local)
            if key not in self.batch_definitions:
                source = self.local_datasource if local else self.datasource
                asset = source.add_dataframe_asset(name=table)
                self.batch_definitions[key] = asset.add_batch_definition_whole_dataframe(
                    f"{table} whole dataframe")
            return self.batch_definitions[key]


def get(data_docs_dir: Path | None = None) -> Gx:
    """The process-wide GX context (created once; one more per Data Docs folder).

    Without Data Docs everything is in memory, and the context has the Spark datasource validation
    runs on. With Data Docs the suites and validation results are kept in files under
    <data_docs_dir>/_gx: GX's site builder drops pages whose result is not in the context's stores,
    so in-memory stores would erase earlier runs' pages (each hourly job is its own process). That
    context only stores results and builds the site: it has no datasource (adding one would start a
    Spark session, which pruning the Data Docs does not need)."""
    key = str(Path(data_docs_dir).resolve()) if data_docs_dir is not None else None
    with lock:
        if key not in contexts:
            os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
            import great_expectations as gx
            from great_expectations.data_context.types.base import (DataContextConfig, FilesystemStoreBackendDefaults,
                                                                    ProgressBarsConfig)

            if key is None:
                context = gx.get_context(mode="ephemeral")
            else:
                context = gx.get_context(mode="ephemeral", project_config=DataContextConfig(
                    store_backend_defaults=FilesystemStoreBackendDefaults(
                        root_directory=str(Path(key) / DOCS_STORES)),
                    data_docs_sites={DOCS_SITE: {
                        "class_name": "SiteBuilder",
                        "show_how_to_buttons": False,   # GX's tutorial links and walkthrough
                        # views that render pages loading nothing from the network (quality.docs)
                        "site_index_builder": {"module_name": "fleethealth.quality.docs",
                                               "class_name": "RecentIndexBuilder",
                                               "validation_results_limit": DOCS_INDEX_RESULTS,
                                               "view": DOCS_INDEX_VIEW},
                        "site_section_builders": {section: {"module_name": "fleethealth.quality.docs",
                                                            "class_name": "HourSectionBuilder",
                                                            "view": DOCS_PAGE_VIEW} for section in
                                                  ("expectations", "validations", "profiling")},
                        "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                                          "base_directory": key},
                    }},
                ))
            context.variables.progress_bars = ProgressBarsConfig(globally=False)
            # no spark_config: GX would apply it to the running session and may restart it
            # persist=False: GX would cache every frame it validates (a second copy of a
            # materialized table, in memory); fleethealth.quality.suites persists what is not materialized already
            datasource = (context.data_sources.add_spark(name="fleethealth_spark", persist=False)
                          if key is None else None)
            local = context.data_sources.add_pandas(name="fleethealth_pandas") if key is None else None
            contexts[key] = Gx(context, datasource, {}, local)
        return contexts[key]


@contextmanager
def docs_lock(data_docs_dir: Path):
    """Hold the Data Docs site (an exclusive flock on <data_docs_dir>/_gx/site.lock) while results
    are stored and pages built, or pruned: GX's index build deletes the pages whose result it did
    not list a moment before, so a page written by another process (another hour's job, the
    maintenance job) between the two would be lost."""
    path = Path(data_docs_dir) / DOCS_STORES / "site.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_docs(data_docs_dir: Path, stored: list) -> None:
    """Render the pages of the `stored` results (no other) and rebuild the site's index."""
    with lock:
        get(data_docs_dir).context.build_data_docs(site_names=[DOCS_SITE], resource_identifiers=stored)
