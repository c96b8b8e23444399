#!/usr/bin/env python3
"""The weighted cost of a plan.json, computed the same way for any version of remodel's plan format,
so two designers can be compared on one workload (e.g. the rule-based plan before the cost-based
selection, and today's).

Usage: bench/plan_cost.py PLAN.json [PLAN.json ...]

Per 100 calls of the workload (each pattern weighted by its share of the calls):
  partition reads: per read, 1 for a single-partition read, the bucket count for a window over
                   several buckets, 10 for an IN on the partition key, plus one per row for every
                   lookup after the first read (rows = the LIMIT, else 1); reads the plan cannot
                   serve are left out (they cost the same everywhere);
  table writes:    per write, its statements (a statement run for each row of a many-row read
                   counts the rows the plan estimates, when it says; else 1);
  reads before write: per write, its reads before write.
Stored bytes: the sum over tables of partitions x average partition bytes.
"""
import json, re, sys

def cost(path):
    p = json.load(open(path))
    pats = {q["id"]: q for q in p["workload"]["patterns"]}
    total = sum(q.get("calls", 0) for q in pats.values()) or 1
    share = lambda pid: pats[pid].get("calls", 0) * 100.0 / total
    d = p["design"]
    reads = 0.0
    for q in d["queries"]:
        if not q.get("table") or q.get("one_off"):
            continue
        pat = pats[q["pattern"]]
        reason = q.get("reason") or ""
        if "full scan" in reason:
            continue
        n = 1.0
        m = re.search(r"spans (\d+) \w+ buckets", reason)
        if m:
            n = float(m.group(1))
        if "IN on the partition key" in reason:
            n = 10.0
        hops = len(q.get("then", [])) or reason.count("then reads")
        rows = float(pat.get("limit") or 1)
        reads += share(q["pattern"]) * (n + hops * rows)
    writes = rbw = 0.0
    for w in d["writes"]:
        if w.get("one_off"):
            continue
        n = w.get("table_writes")
        if n is None or (n == 0 and w["targets"]):
            n = float(len(w["targets"]))
        writes += share(w["pattern"]) * n
        rbw += share(w["pattern"]) * len(w.get("read_before_write", []))
    stored = sum(t["estimates"]["partitions"] * t["estimates"]["bytes_per_partition_avg"] for t in d["tables"])
    return {"partition_reads": round(reads, 2), "table_writes": round(writes, 2),
            "reads_before_write": round(rbw, 2), "stored_bytes": round(stored), "tables": len(d["tables"])}

if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(json.dumps({"plan": path, **cost(path)}))
