"""The work both queues run: plain functions for RQ, the same as Celery tasks.

The broker and result backend URL comes from REDIS_URL (run.sh sets it).
"""
import os
import time

from celery import Celery

URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

app = Celery("tasks", broker=URL, backend=URL)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    # Acknowledge after the task ran: kombu then keeps it in its unacked set (and its
    # Lua-guarded restore path) while it runs.
    task_acks_late=True,
)


def add(x, y):
    """Used by RQ (by import path) and by Celery (as a task below)."""
    return x + y


def slow_add(x, y):
    time.sleep(0.05)
    return x + y


@app.task(name="tasks.add")
def add_task(x, y):
    return add(x, y)


@app.task(name="tasks.tsum")
def tsum(values):
    return sum(values)
