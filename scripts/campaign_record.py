#!/usr/bin/python3
"""Sums the shard reports that scripts/campaign_shards.sh keeps in a record
folder (RECORD/shard-K.json, each `stax fuzz report --json` of one shard's
database): programs, findings, counts per status, class, transform and
backend, the time spent, and which shards of N are missing.

    /usr/bin/python3 scripts/campaign_record.py RECORD [--shards N]

Exit 1 when some shard has findings, 2 on a malformed report."""
import argparse, collections, glob, json, os, re, sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("--shards", type=int, default=0, help="N: list the shards of 0..N-1 without a report")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.record, "shard-*.json")),
                   key=lambda f: int(re.search(r"shard-(\d+)\.json$", f).group(1)))
    if not files:
        print(f"error: {a.record}: no shard-K.json", file=sys.stderr)
        return 2
    total = collections.Counter()
    groups = {k: collections.Counter() for k in ("by_status", "by_class", "by_transform", "by_backend")}
    times = collections.Counter()
    findings, seeds = [], []
    for f in files:
        try:
            d = json.load(open(f))
            total["programs"] += d["programs"]
            total["elapsed_s"] += d["elapsed_s"]
            total["backend_skipped"] += d.get("backend_skipped", 0)
            for k, c in groups.items():
                c.update(d.get(k, {}))
            times.update(d.get("time_s", {}))
            findings += d["findings"]
            p = d["params"]
            seeds.append((int(p["seed"]), p.get("shard", ""), int(p["count"])))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"error: {f}: {e}", file=sys.stderr)
            return 2
    print(f"{len(files)} shard reports in {a.record}: {total['programs']:,} programs, {len(findings)} findings")
    for k, c in groups.items():
        print(f"{k[3:]}: " + " ".join(f"{n}={v}" for n, v in sorted(c.items())))
    print(f"backend runs refused: {total['backend_skipped']}")
    rate = total["programs"] / total["elapsed_s"] if total["elapsed_s"] else 0.0
    print(f"time: {total['elapsed_s']:,.0f} s of the shards' wall clock, {rate:.1f} programs/s; "
          + ", ".join(f"{k} {v:,.1f} s" for k, v in sorted(times.items())))
    if a.shards:
        have = {int(re.search(r"shard-(\d+)\.json$", f).group(1)) for f in files}
        missing = [k for k in range(a.shards) if k not in have]
        print(f"shards without a report: {' '.join(map(str, missing)) if missing else 'none'}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
