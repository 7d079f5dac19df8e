"""Enqueues jobs on RQ 3 (plain, unique and scheduled ones), lets the worker that run.sh
started process them, and reads every result back: from the result stream (XREVRANGE) and
by waiting on it (XREAD BLOCK). Exits non-zero on any wrong or missing result."""
import os
import sys
import time
from datetime import timedelta

from redis import Redis
from rq import Queue
from rq.exceptions import DuplicateJobError

import tasks

N = int(os.environ.get("JOBS", "100"))
conn = Redis.from_url(os.environ["REDIS_URL"])
q = Queue("default", connection=conn)

start = time.time()
jobs = [q.enqueue(tasks.add, i, 1000) for i in range(N)]
# Unique enqueue runs RQ's Lua script: the second one must be refused.
unique = q.enqueue(tasks.add, 7, 7, job_id="unique-job", unique=True)
try:
    q.enqueue(tasks.add, 7, 7, job_id="unique-job", unique=True)
    sys.exit("a duplicate unique job was accepted")
except DuplicateJobError:
    pass
# Scheduled jobs go through the worker's scheduler (its lock is a Lua script too).
scheduled = [q.enqueue_in(timedelta(seconds=1), tasks.slow_add, i, 1) for i in range(5)]

bad = 0
for i, job in enumerate(jobs):
    result = job.latest_result(timeout=60)  # XREAD BLOCK on the job's result stream
    if result is None or result.return_value != i + 1000:
        print(f"job {i}: {result and result.return_value!r}", file=sys.stderr)
        bad += 1
for i, job in enumerate(scheduled):
    result = job.latest_result(timeout=60)
    if result is None or result.return_value != i + 1:
        print(f"scheduled job {i}: {result and result.return_value!r}", file=sys.stderr)
        bad += 1
r = unique.latest_result(timeout=60)
if r is None or r.return_value != 14:
    bad += 1
# Results are in the stream: XREVRANGE + - COUNT 1 and XLEN.
for job in jobs[:10]:
    job.refresh()
    if job.return_value() != job.args[0] + 1000 or len(job.results()) != 1:
        bad += 1
elapsed = time.time() - start
total = N + len(scheduled) + 1
print(f"RQ: {total - bad} of {total} jobs returned the right result ({elapsed:.1f} s)")
sys.exit(1 if bad else 0)
