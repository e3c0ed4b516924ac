// Redis: one multiplexed ioredis connection per worker; a read is one `GET greeting:<id>`.
import { once } from 'node:events';
import Redis, { ReplyError } from 'ioredis';
import { Unavailable } from './unavailable.js';

// Error replies that say Redis cannot serve right now, not that the command is wrong.
const BUSY_REPLIES = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/;

// An error reply (`-NOPERM ...`, `-WRONGTYPE ...`) is Redis answering: the caller's 500. Every
// other rejection is ioredis saying the connection cannot carry the command: closed, not yet
// ready, timed out, reset.
export const unavailable = (err) =>
  (err instanceof ReplyError && !BUSY_REPLIES.test(err.message) ? err : new Unavailable('redis', err));

export function createRedis({ host, port, timeoutMs, autoPipelining }) {
  const client = new Redis({
    host,
    port,
    connectTimeout: timeoutMs,
    // No commandTimeout: the request's own deadline (`greeting` in worker.js) answers 503 at
    // BACKEND_TIMEOUT_MS, and ioredis's per-command timer took about 3 % of the worker's CPU on
    // /redis (it `delete`s the timer property of every command; NOTES.md, 2026-11-26). A command whose
    // request has been answered stays in ioredis's FIFO reply queue until its reply lands on it
    // (replies never shift onto other commands) or until socketTimeout resets the connection:
    // a connection that has commands waiting and receives nothing for this long is destroyed,
    // every command on it fails (503) and ioredis reconnects. This bounds the reply queue of a
    // frozen Redis to one timeout's worth of commands.
    // Workaround: no commandTimeout, whose per-command timer costs CPU (README, Workarounds)
    socketTimeout: timeoutMs,
    // While disconnected, fail at once (503) instead of queueing requests for later.
    enableOfflineQueue: false,
    // A request reads exactly once: never resend a command after a reconnect.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Reconnect quickly forever, so service resumes well within a second of Redis returning.
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
    // Concurrent requests in this worker share one write and one round trip (on by default;
    // REDIS_AUTO_PIPELINING=0 turns it off, for measuring it).
    enableAutoPipelining: autoPipelining,
  });

  // Without a listener ioredis logs every failed reconnect attempt; say it once per outage.
  let healthy = true;
  // Workaround: ioredis logs every failed reconnect attempt (README, Workarounds)
  client.on('error', (err) => {
    if (healthy) console.error(`redis: ${err.message}; reconnecting`);
    healthy = false;
  });
  client.on('ready', () => {
    if (!healthy) console.error('redis: reconnected');
    healthy = true;
  });

  return {
    /** The message for `id`, or null when there is no such key. */
    get: (id) => client.get(`greeting:${id}`).catch((err) => { throw unavailable(err); }),
    /** Settles once connected: until then every command fails fast (no offline queue). */
    ready: () => (client.status === 'ready' ? Promise.resolve() : once(client, 'ready')),
    close: () => client.quit().catch(() => client.disconnect()),
  };
}
