"""Sends tasks through Celery 5 with the broker and the result backend on the server,
including a chord (whose result backend counts parts with a Lua script), and checks every
result. Exits non-zero on any wrong or missing result."""
import os
import sys
import time

from celery import chord, group

import tasks

N = int(os.environ.get("TASKS", "200"))

start = time.time()
bad = 0
results = [tasks.add_task.delay(i, i) for i in range(N)]
for i, r in enumerate(results):
    got = r.get(timeout=120)
    if got != 2 * i:
        print(f"task {i}: {got!r}", file=sys.stderr)
        bad += 1
g = group(tasks.add_task.s(i, 1) for i in range(20))().get(timeout=120)
if g != [i + 1 for i in range(20)]:
    print(f"group: {g!r}", file=sys.stderr)
    bad += 1
c = chord(tasks.add_task.s(i, i) for i in range(20))(tasks.tsum.s()).get(timeout=120)
if c != sum(2 * i for i in range(20)):
    print(f"chord: {c!r}", file=sys.stderr)
    bad += 1
elapsed = time.time() - start
total = N + 2
print(f"Celery: {total - bad} of {total} results right (N tasks, a group, a chord; {elapsed:.1f} s)")
sys.exit(1 if bad else 0)
