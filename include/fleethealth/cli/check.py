"""`fleethealth check`: whether the next hour would run as set up, without running it.

It reads the FLEETHEALTH_* settings and the inventory, then reaches every host the way the pull does
(fleethealth.pull.transports: the same SSH connection with its host-key check, the same listing):
each source the host's role sends (`expect:`) has a folder with files in it, the newest of them
readable, and a host's `jolokia_url` answers the bulk read of its role's MBeans (or its cluster's
Prometheus has samples of it in the last complete hour). With `--notify`
each channel gets one real message marked TEST (fleethealth.notify.run.send_test). One line per
problem with what to do, then a summary; exit 0 only when there is none, else 2 (as a bad setting
or a usage error). Nothing is pulled or written. Hosts are checked PARALLEL at a time, each within
HOST_TIMEOUT_S and all within TOTAL_TIMEOUT_S: a host that drops packets or answers slowly is a line
of its own, after its deadline, not a wait for the others.
"""
from __future__ import annotations

import json
import logging
import posixpath
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fleethealth.fleet import conversion_pattern, log_layouts, mbeans
from fleethealth.fleet.inventory import NO_CONTROLLERS, Cluster, Host, Inventory, InventoryError, version_tuple
from fleethealth.fleet.kafka import KRAFT_SIGNS
from fleethealth.notify.inventory import load_inventory
from fleethealth.fleet.sources import SOURCES
from fleethealth.pull import containers
from fleethealth.pull.containers import GlobFolders
from fleethealth.pull.transports import jolokia, open_transport, prometheus
from fleethealth.pull.transports.base import TransportError
from fleethealth.runtime import config
from fleethealth.runtime.text import printable

HOST_TIMEOUT_S = 60       # a host's SSH connect, listings and Jolokia read (sftp: 10 s timeouts, Jolokia 30 s)
TOTAL_TIMEOUT_S = 300     # every host
PARALLEL = 8              # hosts checked at a time


def settings_problems() -> list[str]:
    """One line per FLEETHEALTH_* variable holding what it does not accept."""
    try:
        config.settings()
    except config.SettingError as exc:
        return [f"{line} (set it right, or unset it for its default)" for line in str(exc).splitlines()]
    return []


def source_problems(host: Host, transport) -> Iterator[str]:
    """What keeps each source the host is expected to send from being pulled: its folder absent, not
    listable, empty, or its newest file unreadable. A host with a jolokia_url gets its JMX live, one of a
    cluster with a Prometheus from it."""
    transport = GlobFolders(transport)     # a folder in `paths:` may be a glob (a pod's folders)
    for source in host.expect:
        if source == "jmx" and (host.jolokia_url or host.prometheus):
            continue
        folder = host.source_dir(source)
        try:
            files = transport.list_files(folder)
            if not files:
                yield (f"{host.host}: {source}: {folder} holds no files (set paths.{source} to the folder where "
                       f"{host.host}'s {source} files are written)" if transport.is_folder(folder) else
                       f"{host.host}: {source}: no folder {folder} (set paths.{source} of the host, or its root, "
                       f"to where they are; or `expect:` without {source})")
                continue
            newest = max(files, key=lambda f: f.mtime)
            transport.head(folder, newest.name, 1)
        except TransportError as exc:       # a file's (FileError) or the folder's
            yield (f"{host.host}: {source}: {str(exc).removeprefix(f'{host.host}: ')} (let the pull's user read "
                   f"{posixpath.join(folder, '')} and its files; no symlink is followed: set paths.{source} to the "
                   "real folder)")


def _canonical(mbean: str) -> str:
    """An ObjectName (pattern) with its keys in order: an agent echoes a request's name its own way."""
    domain, _, keys = mbean.partition(":")
    return f"{domain}:{','.join(sorted(keys.split(',')))}"


def jolokia_problems(host: Host, deadline: float = jolokia.DEADLINE_S) -> Iterator[str]:
    """The host's Jolokia agent answers the bulk read of its role's MBeans with some of them: one
    MBean missing is no problem (a broker without __consumer_offsets partitions has no Size of them;
    the pull lands what there is); none of the role's own that it was asked for (beyond any JVM's
    java.lang) is the wrong agent, and so is an answer of no response at all (`[]`)."""
    try:
        responses = jolokia.read(host.jolokia_url, host.processes, deadline=deadline)
    except TransportError as exc:
        yield (f"{host.host}: {exc} (jolokia_url must be the agent's URL, e.g. http://{host.host}:8778/jolokia/, "
               "and the agent running in the host's JVM)")
        return
    asked = [r["mbean"] for r in mbeans.jolokia_requests(host.processes)]
    wanted = {_canonical(m) for m in asked if not m.startswith("java.lang:")} or {_canonical(m) for m in asked}
    answers = [(r.get("request"), r.get("status")) for r in responses]
    own = [(str(req["mbean"]), status) for req, status in answers
           if isinstance(req, dict) and isinstance(req.get("mbean"), str) and _canonical(req["mbean"]) in wanted]
    if not own:
        yield (f"{host.host}: Jolokia at {host.jolokia_url} answered none of the {len(wanted)} MBean(s) of a "
               f"{host.role} host it was asked for ({len(responses)} response(s)); is jolokia_url the agent of this "
               f"host's {host.role} JVM?")
    elif all(status != 200 for _, status in own):
        yield (f"{host.host}: Jolokia at {host.jolokia_url} has no MBean of a {host.role} host ({printable(own[0][0])}"
               + (f" and {len(own) - 1} more" if len(own) > 1 else "") + " not found; is jolokia_url the agent of "
               f"this host's {host.role} JVM?)")


def prometheus_problems(host: Host, deadline: float = prometheus.DEADLINE_S) -> Iterator[str]:
    """The host's Prometheus answers its queries of the last complete hour, with a sample of the host."""
    hour = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    source = host.prometheus
    try:
        found = prometheus.read_hour(source, host.host, host.processes, hour, deadline)
    except TransportError as exc:
        yield f"{host.host}: {exc} (prometheus.url must be the HTTP API's base, e.g. http://prometheus:9090)"
        return
    if not found:
        yield (f"{host.host}: Prometheus at {source.url} has no sample of {host.host} in the hour from {hour:%Y-%m-%d %H:00} "
               f"UTC ({source.host_label}=\"{host.host}\" or \"{host.host}:<port>\", series named as {source.naming} "
               "names them): is prometheus.host_label the label naming it, does the host name match, is "
               "prometheus.naming its exporter rules' naming, and is jmx_exporter scraped?")


def host_problems(host: Host, deadline: float) -> list[str]:
    """What keeps `host` from being pulled, found before `deadline` (time.monotonic()): a watchdog
    drops its SFTP connection then, and its Jolokia read gets what is left."""
    problems = []
    if host.transport != "http":       # an http host has no files: its live read is all it sends
        try:
            with open_transport(host) as transport:
                watchdog = threading.Timer(max(0.0, deadline - time.monotonic()),
                                           getattr(transport, "abort", lambda: None))
                watchdog.daemon = True
                watchdog.start()
                try:
                    problems += source_problems(host, transport)
                finally:
                    watchdog.cancel()
        except TransportError as exc:
            message = str(exc)
            problems.append(message if message.startswith(f"{host.host}:") else f"{host.host}: {message}")
    left = deadline - time.monotonic()
    if host.jolokia_url and left > 0:
        problems += jolokia_problems(host, min(jolokia.DEADLINE_S, left))
    elif host.prometheus and left > 0 and "jmx" in host.expect:
        problems += prometheus_problems(host, min(prometheus.DEADLINE_S, left))
    return problems


PATTERN_HEAD_BYTES = 64 * 1024     # of a host's newest log file, read as silver reads it


def layout_lines(hosts: list[Host], echo: Callable[[str], None]) -> list[str]:
    """For each reachable host, the newest file of each log source it sends (server.log before the
    others), its first PATTERN_HEAD_BYTES read as silver reads them: with the host's `log_pattern:`, the
    first line the pattern reads is echoed with its fields, and none read is a problem; else a file in
    which no line (container wrappers taken off) starts a record in a layout silver knows is a problem
    (every line of it would be quarantined)."""
    problems = []
    for host in hosts:
        if host.transport == "http":
            continue
        for source in (s for s in host.expect if SOURCES[s].reader == "log4j"):
            found = _newest_head(host, source)
            if found is None:
                continue
            name, head = found
            lines = [(containers.unwrapped(line) or (line,))[0].decode("utf-8", "replace").rstrip("\r")
                     for line in head.split(b"\n")]
            first = next((line for line in lines if line.strip()), "")
            if host.log_pattern and source == "kafka":
                got = conversion_pattern.first_parsed(conversion_pattern.compile_pattern(host.log_pattern), lines)
                if got:
                    echo(printable(f"{host.host}: log_pattern reads {name}: time {got['ts']}, level {got['level']}, "
                                   f"logger {got['logger']}, message {got['message'][:80]!r}"))
                    continue
                problems.append(printable(
                    f"{host.host}: log_pattern reads no line of {name} (its first: {first[:120]!r}): set "
                    "log_pattern to the broker's log4j ConversionPattern, or remove it for the built-in layouts"))
            elif first and not any(log_layouts.starts_record(line) for line in lines):
                problems.append(printable(
                    f"{host.host}: {source}/{name} is in no log layout fleethealth reads (its first line: "
                    f"{first[:120]!r}): every line of it would be quarantined; give the broker's log4j "
                    "ConversionPattern as log_pattern: on the host or its cluster"))
            else:
                continue
            echo(problems[-1])
    return problems


def _newest_head(host: Host, source: str) -> tuple[str, bytes] | None:
    """(name, first PATTERN_HEAD_BYTES) of the newest uncompressed file of a host's log source."""
    folder = host.source_dir(source)
    try:
        with open_transport(host) as opened:
            transport = GlobFolders(opened)     # a folder in `paths:` may be a glob (a pod's folders)
            files = [f for f in transport.list_files(folder) if not f.name.endswith(".gz") and f.size]
            if not files:
                return None
            newest = max(files, key=lambda f: (f.name.startswith("server.log"), f.mtime))
            return newest.name, transport.head(folder, newest.name, PATTERN_HEAD_BYTES)
    except TransportError:
        return None                 # source_problems says what keeps the file from being read


def _checked(host: Host, deadline: float, out: dict[str, list[str]]) -> None:
    try:
        found = host_problems(host, deadline)
    except Exception as exc:  # noqa: BLE001 - one host's surprise must not hide the others
        found = [f"{host.host}: check failed: {type(exc).__name__}: {exc}"]
    out[host.host] = found


def hosts_problems(hosts: list[Host], host_timeout: float | None = None,
                   total_timeout: float | None = None) -> list[list[str]]:
    """Each host's problems, in the order of `hosts`, the hosts checked PARALLEL at a time: each gets
    `host_timeout` (HOST_TIMEOUT_S) from its start, all of them `total_timeout` (TOTAL_TIMEOUT_S).
    A host past its deadline is a problem line and left behind (a daemon thread: a connect that hangs
    does not keep the command alive)."""
    host_timeout = HOST_TIMEOUT_S if host_timeout is None else host_timeout
    total_timeout = TOTAL_TIMEOUT_S if total_timeout is None else total_timeout
    end = time.monotonic() + total_timeout
    out: dict[str, list[str]] = {}
    waiting, running = list(hosts), {}           # host name -> (thread, its deadline)
    while (waiting or running) and time.monotonic() < end:
        while waiting and len(running) < PARALLEL:
            host = waiting.pop(0)
            deadline = min(time.monotonic() + host_timeout, end)
            thread = threading.Thread(target=_checked, args=(host, deadline, out), daemon=True,
                                      name=f"check {host.host}")
            thread.start()
            running[host.host] = (thread, deadline)
        time.sleep(0.02)
        for name, (thread, deadline) in list(running.items()):
            if not thread.is_alive() or time.monotonic() >= deadline:
                del running[name]
    results = []
    for host in hosts:
        if host.host in out:
            results.append(out[host.host])
        elif any(h is host for h in waiting):
            results.append([f"{host.host}: not checked: check's {total_timeout:g} s for all hosts ran out "
                            "(many hosts past their deadline?)"])
        else:
            results.append([f"{host.host}: no answer within {host_timeout:g} s (is the host reachable, and its "
                            "sshd and Jolokia agent answering?)"])
    return results


KRAFT_TAIL_BYTES = 256 * 1024     # of each of a broker's newest log files: where `kraft_warnings` looks
KRAFT_FILES = 3                   # the newest files of each broker looked at


def kraft_shown(host: Host) -> str | None:
    """The first line of `host`'s newest Kafka log files (their last KRAFT_TAIL_BYTES) that only a KRaft
    node logs (fleet.kafka.KRAFT_SIGNS), as "<file>: <line>"; None when none does (or none is readable:
    host_problems says why)."""
    folder, sign = host.source_dir("kafka"), re.compile(KRAFT_SIGNS)
    try:
        with open_transport(host) as transport:
            files = sorted((f for f in transport.list_files(folder) if not f.name.endswith(".gz")),
                           key=lambda f: f.mtime, reverse=True)[:KRAFT_FILES]
            for f in files:
                text = transport.read(folder, f.name, max(0, f.size - KRAFT_TAIL_BYTES), KRAFT_TAIL_BYTES)
                line = next((x for x in text.decode("utf-8", "replace").splitlines() if sign.search(x)), None)
                if line:
                    return f"{f.name}: {line.strip()[:160]}"
    except TransportError:
        return None
    return None


def kraft_warnings(inventory: Inventory, reachable: set[str] | None = None) -> list[str]:
    """A line per KRaft cluster listed without its controllers (a 4.x cluster listed with brokers only,
    `mode: kraft`, or brokers whose logs show KRaft: fleet.inventory.Cluster.mode_from_logs): a fence is
    logged by the active controller only, so fencing and the controller quorum are not watched until its
    controllers are listed. Warnings: the hour runs."""
    def why(c: Cluster) -> str | None:
        if c.mode_from_logs:
            return next((f"{h.host}'s logs show it: {shown}" for h in c.hosts if h.transport != "http"
                         and (reachable is None or h.host in reachable)
                         for shown in [kraft_shown(h)] if shown), None)
        versions = sorted({h.kafka_version for h in c.hosts if h.kafka_version and version_tuple(h.kafka_version)[0] >= 4})
        return f"Kafka {', '.join(versions)} runs KRaft only" if versions else "mode: kraft"

    out = []
    for c in inventory.clusters:
        if any(h.controller for h in c.hosts) or not (c.mode == "kraft" or c.mode_from_logs):
            continue
        because = why(c)
        if because:
            out.append(f"warning: cluster {c.name} runs in KRaft mode ({printable(because)}) and lists no controller: "
                       + NO_CONTROLLERS)
    return out


def naming_notes(inventory: Inventory) -> list[str]:
    """A line per bean a cluster's jmx_exporter naming has no series of (fleet/exporter_namings.yaml), among
    those its Prometheus hosts register: what reads it sees nothing of the cluster (notes: the hour runs)."""
    from fleethealth.fleet import mbeans, namings

    out = []
    for c in inventory.clusters:
        hosts = [h for h in c.hosts if h.prometheus and "jmx" in h.expect]
        if not hosts:
            continue
        naming = namings.naming(hosts[0].prometheus.naming)
        registered = {b.id: b for h in hosts for b in mbeans.for_processes(h.processes)}
        for bean_id, why in naming.absent.items():
            if bean_id in registered:
                out.append(f"clusters[{c.name}]: prometheus.naming {naming.name}: no series of {bean_id} "
                           f"({registered[bean_id].object_name} {registered[bean_id].attribute}, read by "
                           f"{', '.join(registered[bean_id].read_by)}): {why}; a rule exporting it lets them see it")
    return out


def threshold_problems(path: str | None, clusters: list[str] | None) -> list[str]:
    """One line per mistake in the thresholds file (`path`, else $FLEETHEALTH_THRESHOLDS), as gold would
    refuse it with the inventory's `clusters`: the run refuses it before it pulls (gold.thresholds.load)."""
    from fleethealth.gold import thresholds

    try:
        thresholds.load(path, clusters)
    except thresholds.ThresholdError as exc:
        return [f"{line} (fix it, or leave the key out for its default)" for line in str(exc).splitlines()]
    return []


def check(inventory_path: str, notify: bool = False, echo: Callable[[str], None] = print,
          thresholds_path: str | None = None) -> int:
    """Print one line per problem (`echo`), then the summary; 0 when there is none, else 1."""
    logging.getLogger("paramiko").setLevel(logging.WARNING)     # not a line per connection: its problems are
    problems = settings_problems()
    inventory = None
    if not problems:        # the inventory's channel types are a setting (FLEETHEALTH_NOTIFY_CHANNEL_MODULES)
        try:
            inventory = load_inventory(inventory_path)
        except InventoryError as exc:
            problems = list(exc.problems)
        problems += threshold_problems(thresholds_path, inventory and [c.name for c in inventory.clusters])
    for line in problems:
        echo(line)
    if inventory is None:
        echo(f"check: {len(problems)} problem(s) in the settings or the inventory {inventory_path}; "
             "no host reached until they are fixed")
        return 2
    hosts_found = hosts_problems(list(inventory.hosts))
    for found in hosts_found:
        for line in found:
            echo(printable(line))
        problems += found
    # the probes of the hosts' files below connect again: only to the hosts that answered in time
    reachable = {h.host for h, found in zip(inventory.hosts, hosts_found) if not found}
    problems += timezone_lines(inventory, echo, reachable)
    problems += layout_lines([h for h in inventory.hosts if h.host in reachable], echo)
    for line in kraft_warnings(inventory, reachable) + naming_notes(inventory):
        echo(line)
    channels = inventory.notifications
    notes = f"{len(channels)} channel(s) not tested (--notify sends each a test message)"
    if notify:
        from fleethealth.notify.run import send_test

        took = 0
        for channel in channels:
            error = send_test(channel)
            if error is None:
                took += 1
                continue
            line = (f"notifications[{channel.name}]: test message not delivered: {printable(error)} "
                    f"(check the {channel.type} receiver and the channel's settings)")
            echo(line)
            problems.append(line)
        notes = f"{took} of {len(channels)} channel(s) took a test message"
    what = "an hour would run" if not problems else f"{len(problems)} problem(s): an hour would not run as set up"
    echo(f"check: {len(inventory.clusters)} cluster(s), {len(inventory.hosts)} host(s), {notes}: {what}")
    return 2 if problems else 0


STALE_MARK = "pipeline_stale.json"   # in the lakehouse folder: the newest hour of the stale spell told


def stale(inventory_path: str, lakehouse, echo: Callable[[str], None] = print, now: datetime | None = None) -> int:
    """`check --stale`, run from a timer (docs/deployment.md): whether the newest processed hour ended more than
    FLEETHEALTH_STALE_AFTER_HOURS ago (a stopped pipeline runs nothing, so nothing else can say it). Stale: a
    line, `pipeline_stale` sent once per spell to every channel of the inventory (Alertmanager's alert posted
    at each check, so it stays active), exit 2; processed again: `resolved` sent to those told, exit 0."""
    from fleethealth.notify import messages
    from fleethealth.notify.inventory import types
    from fleethealth.notify.run import send_one
    from fleethealth.report.html.read import last_processed_hour

    try:
        inventory = load_inventory(inventory_path)
    except InventoryError as exc:
        for line in exc.problems:
            echo(line)
        return 2
    now = now or datetime.now(timezone.utc)
    last, limit = last_processed_hour(lakehouse), config.stale_after_hours()
    mark = Path(lakehouse.root) / STALE_MARK
    told = json.loads(mark.read_text())["last_hour"] if mark.exists() else None
    if last is None:
        echo("check --stale: no hour processed yet: nothing to be stale")
        return 0
    is_stale = now - (last + timedelta(hours=1)) > timedelta(hours=limit)
    if not is_stale and told is None:
        echo(f"check --stale: the newest processed hour is {last:%Y-%m-%d %H:%M}Z: not stale")
        return 0
    if is_stale:
        msg = messages.stale_message(last, now, limit)
        # people once per spell; Alertmanager forgets what it is not told again
        channels = [c for c in inventory.notifications
                    if told != last.isoformat() or getattr(types()[c.type], "REFRESH", False)]
    else:
        msg = messages.stale_message(datetime.fromisoformat(told), now, limit, resolved=True)
        channels = list(inventory.notifications)
    echo(msg["summary"])
    errors = [(c, e) for c in channels if (e := send_one(c, msg, now)) is not None]
    for channel, error in errors:
        echo(f"notifications[{channel.name}]: {messages.PIPELINE_STALE} not delivered: {printable(error)} (sent again "
             "at the next check)")
    if not errors:
        if is_stale:
            mark.write_text(json.dumps({"last_hour": last.isoformat()}))
        else:
            mark.unlink()
    return 2 if is_stale else 0


def timezone_lines(inventory, echo: Callable[[str], None], reachable: set[str] | None = None) -> list[str]:
    """Each cluster without `timezone:` is noted (its logs are read as UTC, the default); each host
    whose live log files' newest lines, read in its cluster's zone, run whole or half hours away from
    the files' mtimes (a container file's: from its wrapper's UTC time) is a problem naming the offset
    and the zones that fit
    (fleethealth.pull.zoneprobe: the same comparison the pull makes of an hour without lines)."""
    from fleethealth.lake.hours import time_in_name
    from fleethealth.pull import zoneprobe

    problems = []
    for cluster in inventory.clusters:
        if not cluster.timezone_given:
            echo(f"clusters[{cluster.name}]: timezone: not set, logs read as UTC (set it to the zone its logs are "
                 "written in, e.g. timezone: Europe/Berlin)")
        for host in cluster.hosts:
            if host.transport == "http" or (reachable is not None and host.host not in reachable):
                continue
            offsets, newest = [], 0.0
            try:
                with open_transport(host) as transport:
                    for source in host.expect:
                        if SOURCES[source].placed_by != "lines":
                            continue
                        folder = host.source_dir(source)
                        live = [f for f in transport.list_files(folder) if not time_in_name(f.name)
                                and not f.name.endswith(".gz")]
                        for rf in sorted(live, key=lambda f: -f.mtime)[:2]:
                            got = zoneprobe.of_file(
                                lambda offset, n, rf=rf, folder=folder: transport.read(folder, rf.name, offset, n),
                                rf.size, rf.mtime, cluster.timezone)
                            if got:
                                offsets.append(got[0])
                                newest = max(newest, rf.mtime)
            except TransportError:          # reported by hosts_problems
                continue
            ahead = zoneprobe.agreed(offsets)
            if ahead:
                line = (f"logs of {host.host} run {zoneprobe.text(ahead)} their files (read as {cluster.timezone}): "
                        f"{zoneprobe.hint(ahead, cluster.timezone, newest)}")
                echo(printable(line))
                problems.append(line)
    return problems
