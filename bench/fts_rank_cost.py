#!/usr/bin/env python3
"""Where the full-text leg of a session search spends its time: FTS5's bm25 against the match
alone, per query, over a synced archive (read-only).

For each query of CASES (`bench/why_retrieval.py --dump-cases`: its subject and its half), the
leg's own SQL (`archive::ranked_records` with no filter: every word quoted, best 500 by
bm25) is timed, then the same match counted without ranking, then each quoted word counted on
its own. bm25 computes an IDF per phrase by visiting every row that phrase is in (FTS5 keeps no
document frequency), so "rank minus the words' own counts" estimates the leg with those IDFs
cached. Each figure is the best of two runs.

    python3 bench/fts_rank_cost.py --data DIR --cases FILE [--slowest 10]
"""
import argparse
import json
import sqlite3
import time

RANK = ("SELECT rowid, bm25(records_fts) AS s FROM records_fts WHERE records_fts MATCH ? "
        "ORDER BY s LIMIT 500")
COUNT = "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="a synced data dir")
    ap.add_argument("--cases", required=True, help="JSON lines with query and half")
    ap.add_argument("--slowest", type=int, default=10, help="list this many of the slowest queries")
    a = ap.parse_args()
    con = sqlite3.connect(f"file:{a.data}/cairn.db?mode=ro", uri=True)
    # As the app's readers open it (`store.rs`).
    con.execute("PRAGMA mmap_size = 268435456")
    con.execute("PRAGMA cache_size = -32768")

    def best(sql, arg):
        out = float("inf")
        for _ in range(2):
            t = time.perf_counter()
            con.execute(sql, (arg,)).fetchall()
            out = min(out, (time.perf_counter() - t) * 1000)
        return out

    queries = []
    with open(a.cases) as f:
        for line in f:
            c = json.loads(line)
            queries += [c["query"], c["half"]]
    rows = []
    for q in queries:
        words = ['"%s"' % w.replace('"', '""') for w in q.split()]
        expr = " ".join(words)
        rank = best(RANK, expr)
        count = best(COUNT, expr)
        idf = sum(best(COUNT, w) for w in words)
        matches = con.execute(COUNT, (expr,)).fetchone()[0]
        rows.append((rank, count, max(rank - idf, 0.0), matches, q))

    def pct(i, p):
        v = sorted(r[i] for r in rows)
        return v[min(len(v) - 1, int(len(v) * p))]

    print(f"{len(rows)} queries over {a.data}")
    for i, name in [(0, "ranked (bm25), as the leg runs"), (1, "counted (same match, no bm25)"),
                    (2, "ranked minus the words' own counts")]:
        print(f"  {name}: p50 {pct(i, .5):.1f} ms, p95 {pct(i, .95):.1f} ms")
    print("slowest ranked:")
    for r in sorted(rows, reverse=True)[:a.slowest]:
        print(f"  {r[0]:.1f} ms ranked, {r[1]:.1f} ms counted, {r[3]} matches: {r[4][:80]}")


if __name__ == "__main__":
    main()
