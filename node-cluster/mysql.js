// MariaDB: a mysql2 pool per worker; a read is one server-side prepared SELECT (execute prepares
// the statement once per connection and caches it).
import mysql from 'mysql2/promise';
import { Unavailable } from './unavailable.js';

const SQL = 'SELECT id, message FROM greeting WHERE id = ?';
// Server errors that say MariaDB cannot serve right now, not that the statement is wrong:
// ER_CON_COUNT_ERROR, ER_SERVER_SHUTDOWN, ER_LOCK_WAIT_TIMEOUT, ER_QUERY_INTERRUPTED,
// ER_CONNECTION_KILLED (MariaDB).
const BUSY_ERRNOS = new Set([1040, 1053, 1205, 1317, 1927]);

export function createMysql({ host, port, user, password, database, timeoutMs, poolSize, queueLimit }) {
  const pool = mysql.createPool({
    host,
    port,
    user,
    password,
    database,
    charset: 'utf8mb4',
    connectionLimit: poolSize,
    maxIdle: poolSize,
    // mysql2's pool has no acquire timeout: its wait queue is bounded by length instead, and a
    // request that finds it full is answered 503 at once.
    queueLimit,
    connectTimeout: timeoutMs,
    enableKeepAlive: true,
  });

  return {
    /**
     * The message for `id`, or null when there is no such row. `deadline` (a Date.now() value)
     * is when the caller answers 503: a connection obtained after it is handed back unused, and
     * a statement still running at it is abandoned with its connection.
     */
    async get(id, deadline) {
      let conn;
      try {
        conn = await pool.getConnection();
      } catch (err) {
        throw new Unavailable('mysql', err); // refused, connect timeout, queue full
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        conn.release();
        throw new Unavailable('mysql', 'no pooled connection before the deadline');
      }
      // One timer for the whole statement. mysql2's own `timeout` would not do: it covers only the
      // Execute command, from when that starts, and the Prepare that `execute` sends first on a
      // connection that has not prepared the statement yet has none, so on a frozen server the
      // connection stayed busy, out of the pool, until MariaDB thawed. At the deadline the
      // connection is destroyed: it leaves the pool at once and the pool opens a new one when
      // needed. (The statement's promise then settles only when the socket does; nobody waits for
      // it: the caller has answered 503 already.)
      let abandoned = false;
      const timer = setTimeout(() => {
        abandoned = true;
        conn.destroy();
      }, left);
      try {
        const [rows] = await conn.execute(SQL, [Number(id)]);
        clearTimeout(timer);
        conn.release(); // a no-op if the timer destroyed it meanwhile
        return rows.length > 0 ? rows[0].message : null;
      } catch (err) {
        clearTimeout(timer);
        if (abandoned) throw new Unavailable('mysql', err);
        conn.release(); // a no-op once a fatal error has removed it from the pool
        // A fatal error is the connection failing (lost, reset); an error packet is MariaDB
        // answering: the caller's 500, unless it says the server cannot serve now.
        throw err.fatal || BUSY_ERRNOS.has(err.errno) ? new Unavailable('mysql', err) : err;
      }
    },
    /** Opens the first pooled connection. */
    ready: async () => (await pool.getConnection()).release(),
    close: () => pool.end(),
  };
}
