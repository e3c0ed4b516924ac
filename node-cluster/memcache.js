// memcached: memcache-client connections behind generic-pool; a read is one text-protocol
// `get greeting:<id>`. Each pooled client owns a single socket and is lent to one request at a
// time, so a reply can only ever belong to the request holding that client.
import genericPool from 'generic-pool';
import { MemcacheClient } from 'memcache-client';

const CONNECTIONS = 16; // per worker; see README, Tuning

export function createMemcache({ host, port, timeoutMs }) {
  const pool = genericPool.createPool(
    {
      // Connects lazily on first use and reconnects by itself after the socket is lost.
      create: async () => new MemcacheClient({
        server: { server: `${host}:${port}`, maxConnections: 1 },
        connectTimeout: timeoutMs,
        // On a timeout the client destroys its socket, so a late reply cannot be misread.
        cmdTimeout: timeoutMs,
        noDelay: true,
      }),
      destroy: async (client) => client.shutdown(),
    },
    { max: CONNECTIONS, acquireTimeoutMillis: timeoutMs },
  );

  // pool.use lends a client for one operation: released afterwards, or destroyed on an error.
  return {
    /** The message for `id`, or null when there is no such key. */
    async get(id) {
      const item = await pool.use((client) => client.get(`greeting:${id}`));
      return item === undefined ? null : item.value;
    },
    /** Opens the first pooled connection (`version` is not a read). */
    ready: () => pool.use((client) => client.version()),
    async close() {
      await pool.drain();
      await pool.clear();
    },
  };
}
