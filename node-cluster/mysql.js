// MariaDB: a mysql2 pool per worker; a read is one server-side prepared SELECT (execute prepares
// the statement once per connection and caches it). mysql2's callback API, wrapped in one Promise
// per read: its promise API (mysql2/promise) wraps every pooled connection in a new object per
// checkout and, by default (`trace`), captures a stack trace on every call: 10 % of the worker's
// CPU time on /mysql (NOTES.md, 2026-11-26).
// Workaround: mysql2/promise captures a stack per call; callback API used (README, Workarounds)
import mysql from 'mysql2';
import { Unavailable } from './unavailable.js';

const SQL = 'SELECT id, message FROM greeting WHERE id = ?';
// Server errors that say MariaDB cannot serve right now, not that the statement is wrong:
// ER_CON_COUNT_ERROR, ER_SERVER_SHUTDOWN, ER_LOCK_WAIT_TIMEOUT, ER_QUERY_INTERRUPTED,
// ER_CONNECTION_KILLED and ER_STATEMENT_TIMEOUT (MariaDB; a server-wide max_statement_time).
export const BUSY_ERRNOS = new Set([1040, 1053, 1205, 1317, 1927, 1969]);

// A fatal error is the connection failing (lost, reset, refused); an error packet is MariaDB
// answering: the caller's 500, unless it says the server cannot serve now.
export const isUnavailable = (err) => Boolean(err.fatal) || BUSY_ERRNOS.has(err.errno);

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

  // What a failed statement means for its connection and for the caller.
  function failed(conn, err) {
    conn.release(); // a no-op once a fatal error has removed it from the pool
    return isUnavailable(err) ? new Unavailable('mysql', err) : err;
  }

  return {
    /**
     * The message for `id`, or null when there is no such row. `deadline` (a Date.now() value)
     * is when the caller answers 503: a connection obtained after it is handed back unused, and
     * a statement still running at it is abandoned with its connection.
     */
    get: (id, deadline) => new Promise((resolve, reject) => {
      pool.getConnection((connErr, conn) => {
        // Refused, connect timeout, queue full.
        if (connErr) return reject(new Unavailable('mysql', connErr));
        // Workaround: mysql2's pool has no acquire timeout (README, Workarounds)
        const left = deadline - Date.now();
        if (left <= 0) {
          conn.release();
          return reject(new Unavailable('mysql', 'no pooled connection before the deadline'));
        }
        // One timer for the whole statement. mysql2's own `timeout` would not do: it covers only
        // the Execute command, from when that starts, and the Prepare that `execute` sends first on
        // a connection that has not prepared the statement yet has none, so on a frozen server the
        // connection stayed busy, out of the pool, until MariaDB thawed. At the deadline the
        // connection is destroyed: it leaves the pool at once and the pool opens a new one when
        // needed (the caller answers 503 on its own timer at the same deadline).
        // Workaround: mysql2's statement timeout does not cover the Prepare (README, Workarounds)
        let abandoned = false;
        const timer = setTimeout(() => {
          abandoned = true;
          conn.destroy();
          reject(new Unavailable('mysql', 'no answer before the deadline'));
        }, left);
        conn.execute(SQL, [Number(id)], (err, rows) => {
          clearTimeout(timer);
          if (abandoned) return undefined;
          if (err) return reject(failed(conn, err));
          conn.release();
          return resolve(rows.length > 0 ? rows[0].message : null);
        });
      });
    }),
    /** Opens the first pooled connection. */
    ready: () => new Promise((resolve, reject) => {
      pool.getConnection((err, conn) => {
        if (err) return reject(err);
        conn.release();
        resolve();
      });
    }),
    close: () => new Promise((resolve, reject) => pool.end((err) => (err ? reject(err) : resolve()))),
  };
}
