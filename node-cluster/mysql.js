// MariaDB: a mysql2 pool per worker; a read is one server-side prepared SELECT (pool.execute
// prepares the statement once per connection and caches it).
import mysql from 'mysql2/promise';

const SQL = 'SELECT id, message FROM greeting WHERE id = ?';
const CONNECTIONS = 16; // per worker; see README, Tuning

export function createMysql({ host, port, user, password, database, timeoutMs }) {
  const pool = mysql.createPool({
    host,
    port,
    user,
    password,
    database,
    charset: 'utf8mb4',
    connectionLimit: CONNECTIONS,
    maxIdle: CONNECTIONS,
    connectTimeout: timeoutMs,
    enableKeepAlive: true,
  });

  return {
    /** The message for `id`, or null when there is no such row. */
    async get(id) {
      // `timeout` bounds the query itself; the caller's deadline also covers the pool wait.
      // A timed-out query keeps its connection until the late reply arrives, so a connection
      // never returns to the pool with a reply still owed on it.
      const [rows] = await pool.execute({ sql: SQL, timeout: timeoutMs }, [Number(id)]);
      return rows.length > 0 ? rows[0].message : null;
    },
    /** Opens the first pooled connection. */
    ready: async () => (await pool.getConnection()).release(),
    close: () => pool.end(),
  };
}
