#!/usr/bin/env python3
"""Fill the `sessions` vector store of a large archive with copies of real turn vectors, for the
latency of the hybrid query path only (never a retrieval figure: which turns come out means
nothing).

Embedding 100k turns is out of reach on 2 cores (~14 turns a second), so: SOURCE is a data dir
whose `sessions` store was built for real (`cairn embeddings build --store sessions` or
`turns-bench`); TARGET is a synced data dir with many turns. Every turn of TARGET, in id order,
gets the real vector of SOURCE's turn (i mod n) plus Gaussian noise (sigma --noise a component,
seeded), normalised to unit length, under SOURCE's store fingerprint and dims, with
`content_hash` "synthetic" and the turn's own `last_ordinal`; then TARGET's store is marked built
for its current corpus revision (the newest capture), as a completed build marks it. A search
then scans every vector as over a fully built archive; the query is still embedded by the real
model and the lexical leg is TARGET's real full-text index.

    python3 bench/synth_turn_vectors.py --source DATA_40MB --target DATA_BIG [--noise 0.02] [--seed 7]
"""
import argparse
import array
import datetime
import math
import random
import sqlite3
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True, help="data dir with real session vectors")
    ap.add_argument("--target", required=True, help="data dir to fill")
    ap.add_argument("--noise", type=float, default=0.02, help="Gaussian sigma a component")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    src = sqlite3.connect(f"{a.source}/cairn.db")
    fp, dims, built = src.execute(
        "SELECT fingerprint, dims, built_revision FROM embedding_state WHERE store = 'sessions'").fetchone()
    if not fp or not dims or built is None:
        raise SystemExit(f"{a.source}: its sessions store has not been built")
    real = []
    for (blob,) in src.execute("SELECT vector FROM turn_vectors WHERE fingerprint = ? AND length(vector) > 0 "
                               "ORDER BY turn_id", (fp,)):
        v = array.array("f")
        v.frombytes(blob)
        if sys.byteorder != "little":
            v.byteswap()
        real.append(v)
    if not real:
        raise SystemExit(f"{a.source}: no real vectors")
    rng = random.Random(a.seed)
    # A pool of noise vectors, combined with the real ones at coprime strides so that no two
    # turns get the same vector.
    pool = [array.array("f", (rng.gauss(0.0, a.noise) for _ in range(dims))) for _ in range(4099)]
    dst = sqlite3.connect(f"{a.target}/cairn.db")
    turns = dst.execute("SELECT id, last_ordinal FROM turns ORDER BY id").fetchall()
    revision = dst.execute("SELECT COALESCE(MAX(id), 0) FROM captures").fetchone()[0]
    dst.execute("BEGIN IMMEDIATE")
    dst.execute("DELETE FROM turn_vectors")
    rows = []
    for i, (turn_id, last) in enumerate(turns):
        base, noise = real[i % len(real)], pool[(i * 7) % len(pool)]
        v = [x + y for x, y in zip(base, noise)]
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        out = array.array("f", (x / norm for x in v))
        if sys.byteorder != "little":
            out.byteswap()
        rows.append((turn_id, last, fp, "synthetic", out.tobytes()))
        if len(rows) == 10_000:
            dst.executemany("INSERT INTO turn_vectors (turn_id, last_ordinal, fingerprint, content_hash, vector) "
                            "VALUES (?, ?, ?, ?, ?)", rows)
            rows.clear()
    dst.executemany("INSERT INTO turn_vectors (turn_id, last_ordinal, fingerprint, content_hash, vector) "
                    "VALUES (?, ?, ?, ?, ?)", rows)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    dst.execute("UPDATE embedding_state SET built_revision = ?, fingerprint = ?, dims = ?, "
                "generation = generation + 1, built_at = ? WHERE store = 'sessions'", (revision, fp, dims, now))
    dst.commit()
    print(f"{len(turns)} turns of {a.target} given copies of {len(real)} real vectors ({dims} dims) with noise "
          f"sigma {a.noise}; fingerprint {fp}; store marked built at revision {revision}")


if __name__ == "__main__":
    main()
