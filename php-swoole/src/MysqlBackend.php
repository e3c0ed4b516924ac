<?php
declare(strict_types=1);

namespace App;

/**
 * SELECT id, message FROM greeting WHERE id = ? on MariaDB, through PDO (mysqlnd: a PHP stream,
 * so the runtime hooks make it yield), prepared on the server once per connection.
 */
final class MysqlBackend
{
    /**
     * The server's error codes that mean MariaDB cannot serve now (503), beside the client's own
     * (2000-2999: cannot connect, server gone away, lost connection, read timeout): 1040 too many
     * connections, 1053 shutting down, 1927 connection killed, 1969 statement aborted at
     * max_statement_time. Any other error it answers with (1146 ER_NO_SUCH_TABLE, ...) is a 500.
     * The same set as php-fpm's mysql_unavailable() (tests/unit.php holds both to it).
     */
    public const UNAVAILABLE_CODES = [1040, 1053, 1927, 1969];

    public readonly Pool $pool;
    /** @var \WeakMap<\PDO, \PDOStatement> each connection's prepared statement */
    private \WeakMap $statements;

    public function __construct(Config $c)
    {
        // Workaround: mysqlnd's timeouts count whole seconds (README, Workarounds)
        // A backstop only: the request's deadline is Greetings::mysql()'s timer.
        ini_set('mysqlnd.net_read_timeout', (string) max(1, (int) ceil($c->timeout)));
        $dsn = "mysql:host={$c->mysqlHost};port={$c->mysqlPort};dbname={$c->mysqlDatabase};charset=utf8mb4";
        // Workaround: PDOPool wraps each connection in PDOProxy, which re-runs a statement after a timeout (README, Workarounds)
        $this->pool = new Pool(static fn(): \PDO => new \PDO($dsn, $c->mysqlUser, $c->mysqlPassword, [
            \PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION,
            \PDO::ATTR_TIMEOUT => max(1, (int) ceil($c->timeout)),
            // Server-side prepared once per connection: a request is one COM_STMT_EXECUTE.
            \PDO::ATTR_EMULATE_PREPARES => false,
        ]), static function (object $pdo): void {
            // A PDO connection closes when its last reference goes.
        }, $c->poolSize);
        $this->statements = new \WeakMap();
    }

    public function get(\PDO $pdo, int $id): ?string
    {
        try {
            $stmt = $this->statements[$pdo] ??= $pdo->prepare('SELECT id, message FROM greeting WHERE id = ?');
            $stmt->bindValue(1, $id, \PDO::PARAM_INT);
            $stmt->execute();
            $row = $stmt->fetch(\PDO::FETCH_NUM);
            $stmt->closeCursor();
        } catch (\PDOException $e) {
            throw self::failure($e);
        }
        return $row === false ? null : $row[1];
    }

    /** What a PDO error means: Unavailable (503) or BackendError (500). */
    public static function failure(\PDOException $e): Unavailable|BackendError
    {
        return self::unavailable($e)
            ? new Unavailable('mysql: ' . $e->getMessage(), 0, $e)
            : new BackendError('mysql: ' . $e->getMessage(), 0, $e);
    }

    /** Whether a PDO error is about MariaDB's availability rather than an error it answered with. */
    public static function unavailable(\PDOException $e): bool
    {
        // errorInfo[1] is the driver's code; a failed connect carries it in getCode() instead.
        $code = $e->errorInfo[1] ?? $e->getCode();
        return is_int($code) && (($code >= 2000 && $code < 3000) || in_array($code, self::UNAVAILABLE_CODES, true));
    }
}
