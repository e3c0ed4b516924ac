// memcached: one memcache-client per worker; a read is one text-protocol `get greeting:<id>`.
// The client opens up to `connections` sockets, sends each command on an idle one or else on
// the least busy one (pipelining), and matches replies to commands in order per socket.
import { MemcacheClient } from 'memcache-client';
import { Unavailable } from './unavailable.js';

export function createMemcache({ host, port, timeoutMs, connections }) {
  const client = new MemcacheClient({
    server: { server: `${host}:${port}`, maxConnections: connections },
    connectTimeout: timeoutMs,
    // A socket whose oldest command has waited longer than this is destroyed with every command
    // on it (503), so a late reply is never read and a frozen memcached holds at most one
    // timeout's worth of commands; the next command opens a new socket. The client never retries.
    cmdTimeout: timeoutMs,
    noDelay: true,
  });

  // A reply `ERROR`, `CLIENT_ERROR ...` or `SERVER_ERROR ...` (memcache-client attaches its
  // tokens as `cmdTokens`) is memcached answering: the caller's 500. Every other rejection is the
  // socket failing: refused, reset, timed out.
  const unavailable = (err) => (err.cmdTokens ? err : new Unavailable('memcache', err));

  return {
    /** The message for `id`, or null when there is no such key. */
    get: (id) => client.get(`greeting:${id}`).then(
      (item) => (item === undefined ? null : item.value),
      (err) => { throw unavailable(err); },
    ),
    /** Opens the first connection (`version` is not a read). */
    ready: () => client.version(),
    close: async () => client.shutdown(),
  };
}
