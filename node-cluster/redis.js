// Redis: one multiplexed ioredis connection per worker; a read is one `GET greeting:<id>`.
import { once } from 'node:events';
import Redis from 'ioredis';

export function createRedis({ host, port, timeoutMs }) {
  const client = new Redis({
    host,
    port,
    connectTimeout: timeoutMs,
    // Bounds every command; a late reply still lands on its own (already timed-out) command,
    // because ioredis keeps the command in its FIFO reply queue, so replies never shift.
    commandTimeout: timeoutMs,
    // While disconnected, fail at once (503) instead of queueing requests for later.
    enableOfflineQueue: false,
    // A request reads exactly once: never resend a command after a reconnect.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Reconnect quickly forever, so service resumes well within a second of Redis returning.
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
    // Concurrent requests in this worker share one write and one round trip.
    enableAutoPipelining: true,
  });

  // Without a listener ioredis logs every failed reconnect attempt; say it once per outage.
  let healthy = true;
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
    get: (id) => client.get(`greeting:${id}`),
    /** Settles once connected: until then every command fails fast (no offline queue). */
    ready: () => (client.status === 'ready' ? Promise.resolve() : once(client, 'ready')),
    close: () => client.quit().catch(() => client.disconnect()),
  };
}
