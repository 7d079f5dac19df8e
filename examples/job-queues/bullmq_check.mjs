// BullMQ against the server: JOBS jobs (every 10th delayed, every 7th prioritized, every 13th
// failing once and retried) and 20 added in bulk, run by a worker of concurrency 4; every
// result is read back from its job and checked, and the queue must end with every job
// completed and none waiting, delayed or failed. BullMQ's scripts use cjson and cmsgpack,
// blocking pops on its marker key and streams for its events.
import { Queue, Worker } from 'bullmq';

const url = new URL(process.env.REDIS_URL || 'redis://127.0.0.1:6379/0');
const connection = { host: url.hostname, port: Number(url.port) };
const name = `bullmq-check-${process.pid}`;
const jobs = Number(process.env.JOBS || 100);
const bulk = 20;
const expected = jobs + bulk;

const queue = new Queue(name, { connection });
const results = new Map();
const failedOnce = new Set();
const worker = new Worker(
  name,
  async (job) => {
    if (job.data.flaky && !failedOnce.has(job.id)) {
      failedOnce.add(job.id);
      throw new Error('fails once');
    }
    return job.data.x * 2;
  },
  { connection, concurrency: 4 },
);
worker.on('completed', (job, value) => results.set(job.id, value));
worker.on('error', (e) => console.error('worker error:', e.message));

for (let i = 0; i < jobs; i++) {
  const opts = {};
  if (i % 10 === 0) opts.delay = 200;
  if (i % 7 === 0) opts.priority = 1 + (i % 3);
  if (i % 13 === 0) opts.attempts = 3;
  await queue.add('double', { x: i, flaky: i % 13 === 0 }, opts);
}
await queue.addBulk(
  Array.from({ length: bulk }, (_, k) => ({ name: 'double', data: { x: 1000 + k } })),
);

const deadline = Date.now() + 120_000;
while (results.size < expected && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
}
let wrong = 0;
for (const [id, value] of results) {
  const job = await queue.getJob(id);
  if (!job || value !== job.data.x * 2 || job.returnvalue !== value) wrong++;
}
const counts = await queue.getJobCounts();
const settled = counts.completed === expected && counts.waiting === 0 && counts.delayed === 0 &&
  counts.failed === 0 && counts.active === 0 && counts.prioritized === 0;
const retried = [...failedOnce].length;
const ok = results.size === expected && wrong === 0 && settled && retried > 0;
console.log(
  `BullMQ: ${results.size} of ${expected} jobs completed, ${wrong} wrong results, ` +
    `${retried} retried after a failure; counts ${JSON.stringify(counts)}: ${ok ? 'OK' : 'FAILED'}`,
);
await worker.close();
await queue.obliterate({ force: true });
await queue.close();
process.exit(ok ? 0 : 1);
