"""Talking to the three backends as a client: readiness, seeding, read counters, editing a row.

The read counters come from each server's own statistics, so they count what a stack really
sent, whatever its driver does.
"""
import contextlib

import pymemcache.client.base
import pymysql
import redis

from harness import contract
from harness.config import external_services, settings

KEY = "greeting:{}"


class Redis:
    name = "redis"

    def __init__(self, timeout: float = 2.0):
        s = settings()
        self.client = redis.Redis(host=s["REDIS_HOST"], port=int(s["REDIS_PORT"]),
                                  socket_timeout=timeout, socket_connect_timeout=timeout)

    def ping(self) -> None:
        self.client.ping()

    def seed(self, greetings: dict[int, str]) -> None:
        pipe = self.client.pipeline(transaction=False)
        for i, message in greetings.items():
            pipe.set(KEY.format(i), message.encode())
        pipe.execute()

    def reads(self) -> int:
        return int(self.client.info("commandstats").get("cmdstat_get", {}).get("calls", 0))

    def set_message(self, i: int, message: str) -> None:
        self.client.set(KEY.format(i), message.encode())

    def close(self) -> None:
        self.client.close()


class Memcache:
    name = "memcache"

    def __init__(self, timeout: float = 2.0):
        s = settings()
        self.client = pymemcache.client.base.Client(
            (s["MEMCACHE_HOST"], int(s["MEMCACHE_PORT"])), connect_timeout=timeout, timeout=timeout)

    def ping(self) -> None:
        self.client.version()

    def seed(self, greetings: dict[int, str]) -> None:
        items = {KEY.format(i): m.encode() for i, m in greetings.items()}
        failed = self.client.set_many(items, noreply=False)
        if failed:
            raise RuntimeError(f"memcached refused {len(failed)} keys")

    def reads(self) -> int:
        # get_multi counts each key as one cmd_get, so a key-by-key read is counted the same either way.
        return int(self.client.stats()[b"cmd_get"])

    def set_message(self, i: int, message: str) -> None:
        self.client.set(KEY.format(i), message.encode(), noreply=False)

    def close(self) -> None:
        self.client.close()


class Mysql:
    name = "mysql"

    def __init__(self, timeout: float = 2.0, database: bool = True):
        s = settings()
        self.conn = pymysql.connect(
            host=s["MYSQL_HOST"], port=int(s["MYSQL_PORT"]), user=s["MYSQL_USER"],
            password=s["MYSQL_PASSWORD"], database=s["MYSQL_DATABASE"] if database else None,
            charset="utf8mb4", connect_timeout=timeout, read_timeout=timeout, write_timeout=timeout,
            autocommit=True)

    def ping(self) -> None:
        self.conn.ping(reconnect=False)

    def seed(self, greetings: dict[int, str]) -> None:
        rows = list(greetings.items())
        with self.conn.cursor() as cur:
            cur.execute(contract.schema_sql())
            for start in range(0, len(rows), 1000):
                cur.executemany("REPLACE INTO greeting (id, message) VALUES (%s, %s)", rows[start:start + 1000])
            cur.execute("DELETE FROM greeting WHERE id NOT BETWEEN 1 AND %s", (len(rows),))

    def reads(self) -> int:
        # MariaDB counts a prepared (binary-protocol) SELECT in Com_select as well as in
        # Com_stmt_execute (measured: 5 executes moved both by 5), so Com_select alone is one per
        # read whichever protocol a driver uses; adding Com_stmt_execute would count prepared reads twice.
        with self.conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name = 'Com_select'")
            return int(cur.fetchone()[1])

    def thread_handling(self) -> str:
        """How the server serves its connections: `pool-of-threads` or `one-thread-per-connection`."""
        with self.conn.cursor() as cur:
            cur.execute("SELECT @@thread_handling")
            return str(cur.fetchone()[0])

    def set_message(self, i: int, message: str) -> None:
        with self.conn.cursor() as cur:
            cur.execute("UPDATE greeting SET message = %s WHERE id = %s", (message, i))

    def answer_errors(self, on: bool) -> None:
        """The select answered with a SQL error (1146, no such table): the server up, the query failing."""
        with self.conn.cursor() as cur:
            cur.execute("SHOW TABLES LIKE 'greeting%'")
            tables = {row[0] for row in cur.fetchall()}
            if on and "greeting" in tables:
                cur.execute("RENAME TABLE greeting TO greeting_hidden")
            elif not on and "greeting_hidden" in tables:
                cur.execute("RENAME TABLE greeting_hidden TO greeting")

    def close(self) -> None:
        self.conn.close()


CLIENTS = {c.name: c for c in (Redis, Mysql, Memcache)}


def client(name: str, **kw):
    return CLIENTS[name](**kw)


# Backends that can be made to answer a read with an error by a client (Redis and memcached are
# made to by harness/error_proxy instead: memcached has no error reply to a get that a client could
# provoke, and a client can make Redis give a busy reply only by stalling it).
ANSWERS_ERRORS = ("mysql",)


@contextlib.contextmanager
def answering_errors(name: str):
    c = client(name)
    try:
        c.answer_errors(True)
        yield
    finally:
        c.answer_errors(False)
        c.close()


def seed(name: str) -> None:
    c = client(name)
    try:
        if name in ANSWERS_ERRORS and name not in external_services():
            c.answer_errors(False)  # an interrupted check must not leave its fault behind
        c.seed(contract.greetings())
    finally:
        c.close()


def mysql_thread_handling() -> str | None:
    """The running MariaDB's `@@thread_handling`, which shapes the /mysql ceiling (README, "Backing
    services"); None when it cannot be read (not up, or an external server that refuses)."""
    try:
        m = Mysql(database=False)
        try:
            return m.thread_handling()
        finally:
            m.close()
    except (pymysql.MySQLError, OSError):
        return None
