// node-cluster: the endpoint contract on plain node:http, one worker process per core.
//
// The primary only forks and supervises workers; it never handles a request. Each worker
// (worker.js) runs its own event loop, HTTP server and backend connections, and accepts its own
// connections on the shared listening socket (SCHED_NONE, see runPrimary). The primary loads
// neither node:http nor the backend clients: that would cost it about 40 MiB of resident memory.
import cluster from 'node:cluster';
import { ConfigError, loadConfig } from './config.js';

const STOP_GRACE_MS = 1500; // the harness expects a stop in under 2 s

let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`node-cluster: ${err.message}`);
  process.exit(1);
}

if (cluster.isPrimary) {
  runPrimary();
} else {
  const { runWorker } = await import('./worker.js');
  runWorker(config);
}

function runPrimary() {
  const listening = new Set();
  let stopping = false;
  let exitCode = 0;
  const alive = () => Object.values(cluster.workers).filter((worker) => !worker.isDead());

  cluster.on('listening', (worker, address) => {
    listening.add(worker.id);
    console.log(`node-cluster: worker ${worker.process.pid} listening on http://${address.address}:${address.port}`);
  });
  cluster.on('exit', (worker, code, signal) => {
    const started = listening.delete(worker.id);
    if (stopping || (code === 0 && signal === null)) {
      // Asked to stop (the whole process group gets the signal): leave once every worker is gone.
      if (alive().length === 0) process.exit(exitCode);
    } else if (!started) {
      console.error(`node-cluster: worker ${worker.process.pid} failed before listening; stopping`);
      stop(1);
    } else {
      console.error(`node-cluster: worker ${worker.process.pid} died (${signal ?? `exit ${code}`}); replacing it`);
      cluster.fork();
    }
  });

  function stop(code = 0) {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const worker of alive()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of alive()) worker.process.kill('SIGKILL');
      process.exit(exitCode);
    }, STOP_GRACE_MS).unref();
    if (alive().length === 0) process.exit(exitCode);
  }
  process.once('SIGTERM', () => stop());
  process.once('SIGINT', () => stop());

  // Workers accept from the shared socket themselves: under Node's round-robin default the primary
  // hands connections over one at a time, and a burst waited there (NOTES.md, 2026-11-23).
  // NODE_CLUSTER_SCHED_POLICY, Node's own switch, still overrides this. A benchmark setting: with
  // several workers production keeps rr (README, Benchmark-only settings).
  // Workaround: Node's round-robin hand-off starves a burst of connections (README, Workarounds)
  if (!process.env.NODE_CLUSTER_SCHED_POLICY) cluster.schedulingPolicy = cluster.SCHED_NONE;
  console.log(`node-cluster: primary ${process.pid} starting ${config.workers} workers ` +
    `(scheduling: ${cluster.schedulingPolicy === cluster.SCHED_NONE ? 'none' : 'rr'})`);
  for (let i = 0; i < config.workers; i++) cluster.fork();
}
