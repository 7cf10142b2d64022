"""What an hour cost in Spark and Delta terms (issue 65 item 1), counted from what the hour leaves:

- Spark jobs, tasks, Delta snapshot computations and the seconds in which no job ran, per layer, from
  the application's event log (Spark's listener events, what the history server reads; each job
  carries the `fleethealth.layer` local property of pipeline.window; a snapshot computation is a job
  Delta describes as "Compute snapshot for version: N");
- Delta commits per table, from the `_delta_log` versions the hour added, and whether each changed the
  table's rows (added a file with rows, removed one, or changed its schema);
- the driver's peak used heap after a full collection (its live set), from the JVM's GC log (`-Xlog:gc`).

`conf_file(folder)` writes the Spark settings (FLEETHEALTH_SPARK_CONF's format) and `env(folder)` the
environment that make an application leave them in `folder`.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from fleethealth.runtime.frames import LAYER_PROPERTY

SNAPSHOT_JOB = "Compute snapshot for version"
_GC_AFTER = re.compile(r"\bPause (?P<kind>Young|Full)\b.*?(?P<before>\d+)M->(?P<after>\d+)M\(\d+M\)")


def conf_file(folder: Path, base: Path | None = None) -> Path:
    """A FLEETHEALTH_SPARK_CONF file: `base`'s settings (the deployment's, if any) and the event log in
    folder/events."""
    events = folder / "events"
    events.mkdir(parents=True, exist_ok=True)
    path = folder / "spark-bench.conf"
    lines = base.read_text().splitlines() if base else []
    lines += ["spark.eventLog.enabled true", f"spark.eventLog.dir file:{events}",
              "spark.eventLog.compress false", "spark.eventLog.rolling.enabled false"]
    path.write_text("\n".join(lines) + "\n")
    return path


def env(folder: Path, environ: dict) -> dict:
    """`environ` with the event log's settings and a GC log of every JVM in folder/gc-<pid>.log."""
    from fleethealth.runtime import config

    variable = config.PREFIX + "SPARK_CONF"
    base = environ.get(variable)
    gc = f"-Xlog:gc:file={folder}/gc-%p.log"
    return dict(environ, **{variable: str(conf_file(folder, Path(base) if base else None)),
                            "JAVA_TOOL_OPTIONS": f"{environ.get('JAVA_TOOL_OPTIONS', '')} {gc}".strip()})


@dataclass
class Layer:
    jobs: int = 0
    tasks: int = 0
    snapshots: int = 0
    span_s: float = 0.0      # from its first job's start to the next layer's (the last: to its last job's end)
    idle_s: float = 0.0      # of span_s, the seconds in which none of its jobs ran


@dataclass
class App:
    name: str
    seconds: float
    before_first_job_s: float
    after_last_job_s: float
    layers: dict = field(default_factory=dict)    # layer (or "-": a job outside the layers) -> Layer

    @property
    def jobs(self) -> int:
        return sum(x.jobs for x in self.layers.values())


def _events(path: Path):
    """The events of an uncompressed event log: a file, or a rolled one's folder of events_<n>_ files."""
    files = [path] if path.is_file() else sorted(path.glob("events_*"), key=lambda p: int(p.name.split("_")[1]))
    for f in files:
        with f.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                yield json.loads(line)


def read_event_log(path: Path) -> App:
    """The counts of one application's event log (uncompressed JSON lines)."""
    started = ended = None
    name = path.name
    jobs: dict[int, dict] = {}
    for ev in _events(path):
        kind = ev.get("Event")
        if kind == "SparkListenerApplicationStart":
            started, name = ev["Timestamp"] / 1000, ev.get("App Name", name)
        elif kind == "SparkListenerApplicationEnd":
            ended = ev["Timestamp"] / 1000
        elif kind == "SparkListenerJobStart":
            props = ev.get("Properties") or {}
            jobs[ev["Job ID"]] = {"start": ev["Submission Time"] / 1000, "end": None, "tasks": 0,
                                  "layer": props.get(LAYER_PROPERTY) or "-",
                                  "snapshot": SNAPSHOT_JOB in (props.get("spark.job.description") or ""),
                                  "stages": {s["Stage ID"] for s in ev.get("Stage Infos", [])}}
        elif kind == "SparkListenerJobEnd":
            if ev["Job ID"] in jobs:
                jobs[ev["Job ID"]]["end"] = ev["Completion Time"] / 1000
        elif kind == "SparkListenerTaskEnd":
            for job in jobs.values():
                if ev["Stage ID"] in job["stages"] and job["end"] is None:
                    job["tasks"] += 1
                    break
    if started is None:
        raise ValueError(f"{path}: no SparkListenerApplicationStart (not an event log?)")
    last = max([j["end"] or j["start"] for j in jobs.values()] + [started])
    ended = ended or last
    ordered = sorted(jobs.values(), key=lambda j: j["start"])
    app = App(name, ended - started, (ordered[0]["start"] - started) if ordered else ended - started,
              ended - last)
    order = list(dict.fromkeys(j["layer"] for j in ordered))
    for i, layer in enumerate(order):
        mine = [j for j in ordered if j["layer"] == layer]
        begin = mine[0]["start"]
        nxt = [j["start"] for j in ordered if j["layer"] == order[i + 1]] if i + 1 < len(order) else []
        end = min(nxt) if nxt else max(j["end"] or j["start"] for j in mine)
        busy = _union([(j["start"], j["end"] or end) for j in ordered if begin <= j["start"] < end])
        app.layers[layer] = Layer(len(mine), sum(j["tasks"] for j in mine), sum(j["snapshot"] for j in mine),
                                  end - begin, max(0.0, end - begin - busy))
    return app


def _union(spans: list[tuple[float, float]]) -> float:
    total, reach = 0.0, None
    for a, b in sorted(spans):
        if reach is None or a > reach:
            total += b - a
            reach = b
        elif b > reach:
            total += b - reach
            reach = b
    return total


def event_logs(folder: Path) -> set[Path]:
    return set((folder / "events").glob("*")) if (folder / "events").is_dir() else set()


def delta_versions(tables_root: Path) -> dict[str, set[str]]:
    """Each Delta table under `tables_root` (layer/table, not the staging ones) -> its commit files."""
    out = {}
    for log in tables_root.glob("*/*/_delta_log"):
        out[f"{log.parent.parent.name}.{log.parent.name}"] = {p.name for p in log.glob("*.json")}
    return out


@dataclass
class Commits:
    commits: int = 0
    changed: bool = False


def commits_since(before: dict[str, set[str]], tables_root: Path) -> dict[str, Commits]:
    """Table -> the commits added since `before` (delta_versions) and whether any changed its rows."""
    out = {}
    for table, files in delta_versions(tables_root).items():
        new = sorted(files - before.get(table, set()))
        if not new:
            continue
        c = out[table] = Commits(len(new))
        layer, name = table.split(".", 1)
        for f in new:
            for line in (tables_root / layer / name / "_delta_log" / f).read_text().splitlines():
                action = json.loads(line)
                if "remove" in action or "metaData" in action:
                    c.changed = True
                elif "add" in action:
                    stats = json.loads(action["add"].get("stats") or "{}")
                    c.changed |= stats.get("numRecords", 1) > 0
    return out


@dataclass
class Heap:
    live_mb: int | None   # the peak of the heap used after a full collection: the live set (None: no full one)
    after_any_mb: int     # the peak after any collection (a young one leaves the old generation's garbage)
    collections: int
    full: int


def gc_heap(folder: Path, logs_before: set[Path]) -> Heap | None:
    """The heap of the JVMs whose GC log appeared since `logs_before` (the hour's driver; spark-submit's
    launcher JVM collects nothing), from `-Xlog:gc` lines such as
    `GC(20) Pause Full (Ergonomics) 1532M->199M(1710M) 348.759ms`."""
    live = None
    after_any = n = full = 0
    for log in set(folder.glob("gc-*.log")) - logs_before:
        for line in log.read_text(errors="replace").splitlines():
            m = _GC_AFTER.search(line)
            if m:
                n += 1
                after_any = max(after_any, int(m["after"]))
                if m["kind"] == "Full":
                    full += 1
                    live = max(live or 0, int(m["after"]))
    return Heap(live, after_any, n, full) if n else None


def by_layer(commits: dict[str, Commits]) -> dict[str, tuple[int, int, int]]:
    """layer -> (commits, tables committed, tables changed); the gates' gold.quality_results apart."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for table, c in commits.items():
        key = "gates" if table == "gold.quality_results" else table.split(".")[0]
        out[key][0] += c.commits
        out[key][1] += 1
        out[key][2] += c.changed
    return {k: tuple(v) for k, v in out.items()}
