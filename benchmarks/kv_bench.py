"""KV driver throughput and latency, each operation beside the raw client doing the same statement.

A driver may cost little over its database: the ratio column (driver time / raw time, goal at
most 1.3x) shows what validation, pooling and error mapping add. SQLite always runs; PostgreSQL
runs when KVLAKE_TEST_POSTGRES_DSN (default postgresql://postgres@127.0.0.1:5432/test) answers;
the memory store is listed for reference. Raw SQLite uses its own file with WAL and
synchronous=NORMAL, raw PostgreSQL its own table; both are removed afterwards.

    .venv/bin/python benchmarks/kv_bench.py     # modest sizes, about a minute (`make bench`)
    .venv/bin/python benchmarks/kv_bench.py --n 200000 --point-n 100000 --pg-point-n 20000

The second command gives the full figures (about 15 minutes, most of it PostgreSQL's
single-key commits). Each figure is the best of --repeat rounds, driver and raw alternating.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg

from kvlake.kv import KeyValue, Predicate, Store, open_store
from kvlake.kv.store import MAX_BATCH_SIZE

_T = TypeVar("_T")

OPS = ("set", "get", "set_if", "delete", "set_many", "scan")
P = b"bench"
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"

# Targets from the KV issue; ratios are driver time over raw time.
GOALS: dict[tuple[str, str], float] = {
    ("sqlite", "scan"): 1_500_000,
    ("sqlite", "set_many"): 200_000,
    ("postgres", "set_many"): 30_000,
}
MAX_RATIO = 1.3


@dataclass(frozen=True)
class Measure:
    """`entries` done in `seconds`, with one latency per call (a page or batch for bulk ops)."""

    entries: int
    seconds: float
    latencies_ns: list[int]

    @property
    def rate(self) -> float:
        return self.entries / self.seconds if self.seconds else float("inf")

    def percentile(self, q: int) -> float:
        cuts = statistics.quantiles(self.latencies_ns, n=100, method="inclusive")
        return cuts[q - 1] / 1000 if len(self.latencies_ns) > 1 else self.latencies_ns[0] / 1000


@dataclass(frozen=True)
class Workload:
    keys: list[bytes]
    """Keys for set_many and scan; the point operations use the first `point` of them."""
    point: int
    first: bytes
    second: bytes
    batch: int
    scan_rounds: int
    repeat: int


def timed(items: Iterable[_T], call: Callable[[_T], object], size: Callable[[_T], int]) -> Measure:
    """Time `call(item)` for each item; `size(item)` is how many entries it handles."""
    latencies: list[int] = []
    entries = 0
    clock = time.perf_counter_ns
    started = clock()
    for item in items:
        before = clock()
        call(item)
        latencies.append(clock() - before)
        entries += size(item)
    return Measure(entries, (clock() - started) / 1e9, latencies)


def one(_: object) -> int:
    return 1


def timed_pages(rounds: int, pages: Callable[[], Iterator[list[Any]]]) -> Measure:
    """Time each page fetch of `rounds` full scans."""
    latencies: list[int] = []
    entries = 0
    clock = time.perf_counter_ns
    started = clock()
    for _ in range(rounds):
        scan = pages()
        while True:
            before = clock()
            page = next(scan, None)
            latencies.append(clock() - before)
            if page is None:
                break
            entries += len(page)
    return Measure(entries, (clock() - started) / 1e9, latencies)


def chunks(keys: list[bytes], size: int) -> list[list[bytes]]:
    return [keys[i : i + size] for i in range(0, len(keys), size)]


Results = dict[str, Measure]
Round = Callable[[Workload], Results]


def bench_store(store: Store, w: Workload) -> Results:
    """The workload through kvlake's Store interface."""
    out: Results = {}
    predicates: list[Predicate] = []

    def get(key: bytes) -> None:
        predicates.append(store.get(P, key)[1])

    def set_if(pair: tuple[bytes, Predicate]) -> None:
        store.set_if(P, pair[0], w.second, pair[1])

    def pages() -> Iterator[list[KeyValue]]:
        return store.scan(P, batch_size=MAX_BATCH_SIZE).batches()

    keys = w.keys[: w.point]
    out["set"] = timed(keys, lambda key: store.set(P, key, w.first), one)
    out["get"] = timed(keys, get, one)
    out["set_if"] = timed(list(zip(keys, predicates, strict=True)), set_if, one)
    out["delete"] = timed(keys, lambda key: store.delete(P, key), one)
    batches = [[(k, w.first) for k in chunk] for chunk in chunks(w.keys, w.batch)]
    out["set_many"] = timed(batches, lambda batch: store.set_many(P, batch), len)
    out["scan"] = timed_pages(w.scan_rounds, pages)
    store.drop_partition(P)
    return out


@dataclass(frozen=True)
class RawSql:
    """The statements a driver runs, in the raw client's parameter style."""

    set: str
    get: str
    set_if: str
    delete: str
    scan_from: str
    scan_after: str
    drop: str


def driver_sql(table: str, mark: str) -> RawSql:
    """The drivers' statements: SQLite's and PostgreSQL's differ only in quoting and placeholder."""
    sql = {
        "set": f"INSERT INTO {table} (partition, key, value) VALUES (?, ?, ?)"
        " ON CONFLICT (partition, key) DO UPDATE SET value = excluded.value",
        "get": f"SELECT value FROM {table} WHERE partition = ? AND key = ?",
        "set_if": f"UPDATE {table} SET value = ? WHERE partition = ? AND key = ? AND value = ?",
        "delete": f"DELETE FROM {table} WHERE partition = ? AND key = ?",
        "scan_from": f"SELECT key, value FROM {table} WHERE partition = ? AND key >= ?"
        " ORDER BY key LIMIT ?",
        "scan_after": f"SELECT key, value FROM {table} WHERE partition = ? AND key > ?"
        " ORDER BY key LIMIT ?",
        "drop": f"DELETE FROM {table} WHERE partition = ?",
    }
    return RawSql(**{name: text.replace("?", mark) for name, text in sql.items()})


def bench_raw(
    execute: Callable[[str, tuple[Any, ...]], Any],
    write_batch: Callable[[list[bytes]], None],
    sql: RawSql,
    w: Workload,
) -> Results:
    """The same workload with the raw client; `execute` returns a cursor."""
    out: Results = {}

    def set_if(key: bytes) -> None:
        if execute(sql.set_if, (w.second, P, key, w.first)).rowcount != 1:
            raise RuntimeError(f"raw set_if on {key!r} matched no row")

    def pages() -> Iterator[list[Any]]:
        last, query = b"", sql.scan_from
        while True:
            page = execute(query, (P, last, MAX_BATCH_SIZE)).fetchall()
            if not page:
                return
            yield page
            last, query = page[-1][0], sql.scan_after

    keys = w.keys[: w.point]
    out["set"] = timed(keys, lambda key: execute(sql.set, (P, key, w.first)), one)
    out["get"] = timed(keys, lambda key: execute(sql.get, (P, key)).fetchone(), one)
    out["set_if"] = timed(keys, set_if, one)
    out["delete"] = timed(keys, lambda key: execute(sql.delete, (P, key)), one)
    out["set_many"] = timed(chunks(w.keys, w.batch), write_batch, len)
    out["scan"] = timed_pages(w.scan_rounds, pages)
    execute(sql.drop, (P,))
    return out


@contextlib.contextmanager
def raw_sqlite(path: str, synchronous: str) -> Iterator[Round]:
    """sqlite3 on its own file, configured as the driver configures its connections."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute(
        "CREATE TABLE kv (partition BLOB NOT NULL, key BLOB NOT NULL, value BLOB NOT NULL,"
        " PRIMARY KEY (partition, key)) WITHOUT ROWID"
    )
    cursor = conn.cursor()
    sql = driver_sql("kv", "?")

    def run(w: Workload) -> Results:
        def write_batch(keys: list[bytes]) -> None:
            cursor.execute("BEGIN IMMEDIATE")
            cursor.executemany(sql.set, [(P, k, w.first) for k in keys])
            cursor.execute("COMMIT")

        return bench_raw(cursor.execute, write_batch, sql, w)

    try:
        yield run
    finally:
        conn.close()


@contextlib.contextmanager
def raw_postgres(dsn: str, table: str) -> Iterator[Round]:
    """One psycopg connection (autocommit, binary) on its own table, with the driver's SQL."""
    sql = driver_sql(f'"{table}"', "%s")
    many = (
        f'INSERT INTO "{table}" (partition, key, value)'
        " SELECT %s, k, v FROM unnest(%s::bytea[], %s::bytea[]) AS u(k, v)"
        " ON CONFLICT (partition, key) DO UPDATE SET value = EXCLUDED.value"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f'CREATE TABLE "{table}" (partition bytea NOT NULL, key bytea NOT NULL,'
            " value bytea NOT NULL, PRIMARY KEY (partition, key))"
        )

        def execute(query: str, params: tuple[Any, ...]) -> Any:
            return conn.execute(query, params, binary=True)

        def run(w: Workload) -> Results:
            def write_batch(keys: list[bytes]) -> None:
                conn.execute(many, (P, keys, [w.first] * len(keys)), binary=True)

            return bench_raw(execute, write_batch, sql, w)

        yield run


def postgres_problem(dsn: str) -> str | None:
    try:
        with psycopg.connect(dsn, connect_timeout=5):
            return None
    except psycopg.Error as exc:
        return " ".join(str(exc).split())


def drop_tables(dsn: str, tables: list[str]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in tables:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')


def best(rounds: list[Results]) -> Results:
    """Per operation, the fastest round: the one least disturbed by checkpoints and neighbours."""
    return {op: max((r[op] for r in rounds), key=lambda m: m.rate) for op in OPS}


def run_driver(name: str, w: Workload, tmp: str, dsn: str) -> tuple[Results, Results | None]:
    """Alternate driver and raw rounds, so that drift in the machine hits both alike."""
    ours: list[Results] = []
    raws: list[Results] = []
    with contextlib.ExitStack() as stack:
        raw: Round | None = None
        if name == "mem":
            url = "mem://"
        elif name == "sqlite":  # the default: synchronous=FULL, durable against power loss
            url = f"sqlite://{tmp}/driver.db"
            raw = stack.enter_context(raw_sqlite(f"{tmp}/raw.db", "FULL"))
        elif name == "sqlite-normal":  # the faster setting, which a power loss can undo
            url = f"sqlite://{tmp}/driver-normal.db?synchronous=normal"
            raw = stack.enter_context(raw_sqlite(f"{tmp}/raw-normal.db", "NORMAL"))
        else:
            suffix = uuid.uuid4().hex[:8]
            tables = [f"kvbench_driver_{suffix}", f"kvbench_raw_{suffix}"]
            stack.callback(drop_tables, dsn, tables)
            url = f"{dsn}{'&' if '?' in dsn else '?'}table={tables[0]}"
            raw = stack.enter_context(raw_postgres(dsn, tables[1]))
        store = stack.enter_context(open_store(url))
        for _ in range(w.repeat):
            ours.append(bench_store(store, w))
            if raw is not None:
                raws.append(raw(w))
    return best(ours), best(raws) if raws else None


def goal_cell(driver: str, op: str, measure: Measure, ratio: float | None) -> str:
    cells = []
    if (driver, op) in GOALS:
        target = GOALS[driver, op]
        cells.append(f">={target / 1000:.0f}k/s {'ok' if measure.rate >= target else 'MISS'}")
    if ratio is not None:
        cells.append(f"<={MAX_RATIO}x {'ok' if ratio <= MAX_RATIO else 'MISS'}")
    return ", ".join(cells)


def print_table(results: dict[str, tuple[Results, Results | None]]) -> None:
    head = f"{'driver':<14}{'op':<9}{'entries':>9}{'ops/s':>11}{'p50 us':>9}{'p99 us':>9}"
    head += f"{'raw ops/s':>11}{'raw p50':>9}{'raw p99':>9}{'ratio':>7}  goal"
    print(head)
    print("-" * len(head))
    for driver, (ours, raw) in results.items():
        for op in OPS:
            m = ours[op]
            line = f"{driver:<14}{op:<9}{m.entries:>9}{m.rate:>11,.0f}{m.percentile(50):>9.1f}"
            line += f"{m.percentile(99):>9.1f}"
            ratio = None
            if raw is not None:
                r = raw[op]
                ratio = r.rate / m.rate
                line += f"{r.rate:>11,.0f}{r.percentile(50):>9.1f}{r.percentile(99):>9.1f}"
                line += f"{ratio:>6.2f}x"
            else:
                line += f"{'-':>11}{'-':>9}{'-':>9}{'-':>7}"
            print(f"{line}  {goal_cell(driver, op, m, ratio)}")
    print(
        "\nops/s counts entries (scan, set_many: entries/s; latency per page or batch)."
        " Best of --repeat rounds."
        "\nReference, raw SQLite on the goal machine: ~56k single upserts/s, 200k gets/s,"
        " 300k batched upserts/s, 2.4M entries/s scanned."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20000, help="keys for set_many and scan")
    parser.add_argument("--point-n", type=int, default=20000, help="keys per point op, embedded")
    parser.add_argument(
        "--pg-point-n", type=int, default=2000, help="keys per point op, PostgreSQL (~400us each)"
    )
    parser.add_argument("--batch", type=int, default=1000, help="entries per set_many call")
    parser.add_argument("--value-size", type=int, default=100, help="bytes per value")
    parser.add_argument("--scan-rounds", type=int, default=5, help="full scans per round")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is shown")
    parser.add_argument(
        "--drivers", default="mem,sqlite,sqlite-normal,postgres", help="comma-separated"
    )
    args = parser.parse_args(argv)
    w = Workload(
        keys=[b"key/%010d" % i for i in range(args.n)],
        point=args.point_n,
        first=b"a" * args.value_size,
        second=b"b" * args.value_size,
        batch=args.batch,
        scan_rounds=args.scan_rounds,
        repeat=args.repeat,
    )
    dsn = os.environ.get("KVLAKE_TEST_POSTGRES_DSN", DEFAULT_DSN)
    results: dict[str, tuple[Results, Results | None]] = {}
    with tempfile.TemporaryDirectory(prefix="kvbench-") as tmp:
        for name in args.drivers.split(","):
            if name == "postgres" and (problem := postgres_problem(dsn)) is not None:
                print(f"postgres skipped: {problem}; set KVLAKE_TEST_POSTGRES_DSN", file=sys.stderr)
                continue
            sized = dataclasses.replace(w, point=args.pg_point_n) if name == "postgres" else w
            print(f"{name}: {args.repeat} rounds ...", file=sys.stderr, flush=True)
            results[name] = run_driver(name, sized, tmp, dsn)
    print_table(results)
    if "sqlite" in results and "sqlite-normal" in results:
        full, normal = results["sqlite"][0], results["sqlite-normal"][0]
        costs = ", ".join(f"{op} {normal[op].rate / full[op].rate:.2f}x" for op in OPS)
        print(f"\nSQLite durability cost (synchronous=normal over full, ops/s): {costs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
