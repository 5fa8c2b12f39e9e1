#!/usr/bin/env python3
"""The real-broker matrix: every scenario x protocol x client x repetition on the local Apache
Kafka (`run.sh run ... --kafka`), beside the simulator's run of the same file.

    scripts/real/matrix.py [--reps N] [--sim BINARY] [--commit-every MINUTES] [--only SCENARIO]...
    scripts/real/matrix.py --list        (the cells in run order, done or not)
    scripts/real/matrix.py --resummarize (recompute every recorded cell's CSVs from its raw record)
    scripts/real/matrix.py --resimulate [--sim BINARY] (redo every cell's sim/ with BINARY)

Cells go to results/real/<kafka version>/<client>/<scenario>/<protocol>/rep<N>/ (summary.csv,
partitions.csv, rebalances.csv, host.txt); the scenario as run (the file with `client` set,
and the Java spelling fetch.max.wait.ms for the Java client) is scenario.toml in the
scenario's folder, and the simulator's run of it with that protocol is in <protocol>/sim/.
Raw records stay in scripts/real/.runs/matrix/ (not committed). A cell with a summary.csv is
skipped, so the same command resumes. A run in which a member subscribed more than 1 s after
its moment (a starved JVM on a loaded host) is redone, up to 3 attempts (host.txt says so). Order: the cells that decide eager vs cooperative first
(eager:range and cooperative:cooperative-sticky, Java then librdkafka, every scenario), then
+static and KIP-848, then the next repetition. --commit-every commits results/real/<version>
(only that path) on the current branch. While scripts/real/.runs/matrix.pause exists no new
cell starts (up to 2 h), so another real run can have the machine to itself. Standard library
only; every run has a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCENARIOS = {
    "crash": ROOT / "sims/real/crash.toml",
    "join": ROOT / "sims/real/join.toml",
    "leave": ROOT / "sims/real/leave.toml",
    "stall-join": ROOT / "sims/real/stall-join.toml",
    "stall-maxpoll": ROOT / "sims/real/stall-maxpoll.toml",
    "rolling-restart": HERE / "scenarios/rolling-restart.toml",
    "static-restart": HERE / "scenarios/static-restart.toml",
    "gc-pause": HERE / "scenarios/gc-pause.toml",
    "scale-out": HERE / "scenarios/scale-out.toml",
}
# Run only when named with --only (not part of the 216-cell matrix): issue 26's phase case, a
# join at 60 s into a group with 1 s heartbeats, repeated to measure the real spread.
EXTRA = {
    "scale-out-60s": ROOT / "sims/real/scale-out-60s.toml",
    # Issue 25 item 5: partitions added; a classic group sees them at its metadata refreshes.
    "partitions-added": HERE / "scenarios/partitions-added.toml",
    # Issue 25 item 6c: default client ids, member ids ordered by the broker's UUIDs.
    "restart-range": HERE / "scenarios/restart-range.toml",
}
DECIDING = ["eager:range", "cooperative:cooperative-sticky"]
OTHERS = ["eager:range+static", "consumer:uniform"]
CLIENTS = ["java", "librdkafka"]
SIM_DEFAULT = str(ROOT / "target/release/rebalance-sim")  # `cargo build --release` first
PAUSE_FILE = HERE / ".runs/matrix.pause"  # while it exists, no new cell starts (CI timing, other runs)
PAUSE_MAX_S = 7200
RUN_MARGIN_S = 240
LATE_START_MAX_S = 1.0  # a member subscribing later than this after its moment: the cell is redone
ATTEMPTS = 3  # broker start/stop, JVMs, summary on top of the scenario's duration
HOST_NOTE = (
    "one host, wall clock; the machine (2 cores) was shared with compiling helpers during the "
    "run, so scheduling noise is possible"
)


def kafka_version() -> str:
    """The pinned release (scripts/real/kafka/pom.xml)."""
    m = re.search(r"<kafka.version>([^<]+)</kafka.version>", (HERE / "kafka/pom.xml").read_text())
    assert m, "scripts/real/kafka/pom.xml has no kafka.version"
    return m.group(1)


def proto_dir(protocol: str) -> str:
    """Folder name of a protocol label."""
    return protocol.replace(":", "_").replace("+", "_")


def derived_text(source: Path, client: str) -> str:
    """The scenario file as run with `client`: the [consumer] client key set, and for Java the
    Java spelling of the fetch wait (the simulator reads both; the Java consumer only its own)."""
    text = source.read_text()
    text, n = re.subn(r'(?m)^client\s*=\s*"[^"]*"', f'client = "{client}"', text)
    if n == 0:
        text = text.replace("[consumer]\n", f'[consumer]\nclient = "{client}"\n', 1)
    if client == "java":
        text = text.replace('"fetch.wait.max.ms"', '"fetch.max.wait.ms"')
    return text


def duration_s(text: str) -> float:
    """The scenario's duration (seconds or minutes)."""
    m = re.search(r'(?m)^duration\s*=\s*"(\d+(?:\.\d+)?)(s|m)"', text)
    assert m, "no duration"
    return float(m.group(1)) * (60.0 if m.group(2) == "m" else 1.0)


def cells(
    reps: int, only: list[str], clients: list[str] | None = None, protocols_only: list[str] | None = None
) -> list[tuple[int, str, str, str]]:
    """(rep, client, scenario, protocol) in run order (--client / --protocol narrow it)."""
    names = [s for s in SCENARIOS if not only or s in only] + [s for s in EXTRA if s in only]
    out = []
    for rep in range(1, reps + 1):
        for protocols in (DECIDING, OTHERS):
            for client in clients or CLIENTS:
                for scenario in names:
                    out += [(rep, client, scenario, p) for p in protocols if not protocols_only or p in protocols_only]
    return out


def scenario_file(base: Path, client: str, scenario: str) -> Path:
    """Write (once) and return the scenario as run for this client."""
    path = base / client / scenario / "scenario.toml"
    text = derived_text({**SCENARIOS, **EXTRA}[scenario], client)
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def simulate(sim: str, scenario: Path, protocol: str, out: Path) -> None:
    """The simulator's run of the same file and protocol, once."""
    if (out / "summary.csv").exists():
        return
    done = subprocess.run(
        [sim, "run", str(scenario), "--protocol", protocol, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        print(f"!! sim {scenario} {protocol}: exit {done.returncode}: {done.stderr.strip()[:300]}", flush=True)


def measure(scenario: Path, protocol: str, out: Path, raw: Path, timeout_s: float) -> bool:
    """One real run of one cell; True when it wrote its summary."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(raw, ignore_errors=True)  # the recorder appends: a retried cell starts clean
    load = os.getloadavg()
    cmd = [str(HERE / "run.sh"), "run", str(scenario), "--kafka", "--protocol", protocol]
    cmd += ["--out", str(out), "--raw", str(raw)]
    began = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout_s)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        rc, log = 124, f"timeout after {timeout_s:g} s\n"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever the run left in its session
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
    took = time.time() - began
    (out / "host.txt").write_text(
        f"started {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(began))}, took {took:.0f} s, exit {rc}\n"
        f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (nproc {os.cpu_count()})\n"
        f"{HOST_NOTE}\n\n" + "\n".join(line for line in log.splitlines() if not line.startswith("%"))[-4000:] + "\n"
    )
    return rc == 0 and (out / "summary.csv").exists()


def late_start_s(raw: Path) -> float:
    """The largest delay of a member's subscribe after its scheduled moment in a record (a JVM or
    interpreter starved by a loaded host); the metrics count from the moment, so a late member
    would silently change the scenario."""
    worst = 0.0
    for events in raw.glob("*/events.jsonl"):
        for line in events.read_text().splitlines():
            o = json.loads(line)
            if o.get("k") != "spawn":
                continue
            member = events.parent / f"member-{o['m']}-{o['inc']}.jsonl"
            starts = [json.loads(x)["t_s"] for x in member.read_text().splitlines() if '"k":"start"' in x] if member.exists() else []
            if not starts and o["start_at_s"] > 0:
                continue  # never subscribed (e.g. spawned just before the end)
            worst = max(worst, (starts[0] if starts else 1e9) - o["start_at_s"])
    return worst


def measure_valid(scenario: Path, protocol: str, out: Path, raw: Path, timeout_s: float) -> bool:
    """measure(), redone (up to ATTEMPTS) while a member subscribed late; a late record's
    folder is kept as late-<rep>-<n> beside the cell (not counted by compare.py)."""
    for attempt in range(1, ATTEMPTS + 1):
        ok = measure(scenario, protocol, out, raw, timeout_s)
        late = late_start_s(raw)
        with open(out / "host.txt", "a") as f:
            f.write(f"latest member subscribe after its moment: {late:.3f} s (attempt {attempt})\n")
        if not ok or late <= LATE_START_MAX_S:
            return ok
        shutil.rmtree(out.parent / f"late-{out.name}-{attempt}", ignore_errors=True)
        out.rename(out.parent / f"late-{out.name}-{attempt}")
        print(f"   a member subscribed {late:.1f} s late: {'redone' if attempt < ATTEMPTS else 'left out'}", flush=True)
    return False


def resummarize(base: Path, todo: list[tuple[int, str, str, str]]) -> int:
    """Recompute the CSVs of every recorded cell from its raw record (after a metrics fix)."""
    done = 0
    for rep, client, scenario, protocol in todo:
        out = base / client / scenario / proto_dir(protocol) / f"rep{rep}"
        raw = HERE / ".runs/matrix" / client / scenario / proto_dir(protocol) / f"rep{rep}"
        if not (out / "summary.csv").exists() or not raw.exists():
            continue
        cmd = [str(HERE / "run.sh"), "summarize", str(base / client / scenario / "scenario.toml"), str(raw)]
        cmd += ["--protocol", protocol, "--out", str(out)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        done += r.returncode == 0
        if r.returncode != 0:
            print(f"!! {out}: {r.stderr.strip()[:300]}", flush=True)
    print(f"resummarized {done} cells")
    return 0


def resimulate(base: Path, sim: str) -> int:
    """Redo the simulator's run of every cell that has one (after a model change), with `sim`."""
    done = failed = 0
    for sim_dir in sorted(base.glob("*/*/*/sim")):
        cell = sim_dir.parent
        scenario = cell.parent / "scenario.toml"
        protocol = cell_protocol(cell.name)
        if not scenario.exists() or protocol is None:
            continue
        shutil.rmtree(sim_dir)
        simulate(sim, scenario, protocol, sim_dir)
        ok = (sim_dir / "summary.csv").exists()
        done += ok
        failed += not ok
    print(f"resimulated {done} cells with {sim} ({failed} failed)")
    return 1 if failed else 0


def cell_protocol(folder: str) -> str | None:
    """The protocol spelling of a cell folder (`proto_dir`'s inverse), e.g.
    `cooperative_cooperative-sticky_static` -> `cooperative:cooperative-sticky+static`."""
    parts = folder.split("_")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "static"):
        return None
    spelling = f"{parts[0]}:{parts[1]}" + ("+static" if len(parts) == 3 else "")
    return spelling if proto_dir(spelling) == folder else None


def commit(base: Path) -> None:
    """Commit the matrix folder only (nothing else staged is touched)."""
    rel = base.relative_to(ROOT)
    subprocess.run(["git", "-C", str(ROOT), "add", "--", str(rel)], capture_output=True, timeout=120)
    msg = f"results/real/{base.name}: matrix cells measured so far (scripts/real/matrix.py)"
    subprocess.run(["git", "-C", str(ROOT), "commit", "-q", "-m", msg, "--", str(rel)], capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    """Run (or list) the matrix; returns 0."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--sim", default=SIM_DEFAULT, help="rebalance-sim binary")
    p.add_argument("--commit-every", type=float, default=0.0, metavar="MINUTES")
    p.add_argument("--only", action="append", default=[], choices=sorted({**SCENARIOS, **EXTRA}))
    p.add_argument("--client", action="append", default=[], choices=CLIENTS)
    p.add_argument("--protocol", action="append", default=[], choices=DECIDING + OTHERS)
    p.add_argument("--list", action="store_true")
    p.add_argument("--resummarize", action="store_true")
    p.add_argument("--resimulate", action="store_true")
    args = p.parse_args(argv)
    base = ROOT / "results/real" / kafka_version()
    todo = cells(args.reps, args.only, args.client, args.protocol)
    if args.resummarize:
        return resummarize(base, todo)
    if args.resimulate:
        return resimulate(base, args.sim)
    last_commit = time.time()
    passes = 1 if args.list else 2  # the second pass retries the cells that failed in the first
    for i, (rep, client, scenario, protocol) in [(i, c) for _ in range(passes) for i, c in enumerate(todo, 1)]:
        cell = base / client / scenario / proto_dir(protocol)
        out = cell / f"rep{rep}"
        if args.list:
            print(f"{i:4d} {'done' if (out / 'summary.csv').exists() else 'todo'} {out.relative_to(ROOT)}")
            continue
        if (out / "summary.csv").exists():
            continue
        waited = 0
        while PAUSE_FILE.exists() and waited < PAUSE_MAX_S:
            time.sleep(5)
            waited += 5
        file = scenario_file(base, client, scenario)
        simulate(args.sim, file, protocol, cell / "sim")
        raw = HERE / ".runs/matrix" / client / scenario / proto_dir(protocol) / f"rep{rep}"
        print(f"== {time.strftime('%H:%M:%S')} [{i}/{len(todo)}] {client} {scenario} {protocol} rep{rep}", flush=True)
        ok = measure_valid(file, protocol, out, raw, duration_s(file.read_text()) + RUN_MARGIN_S)
        print(f"   {'ok' if ok else 'FAILED (see host.txt)'}", flush=True)
        if args.commit_every and time.time() - last_commit > args.commit_every * 60:
            commit(base)
            last_commit = time.time()
    if args.commit_every and not args.list:
        commit(base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
