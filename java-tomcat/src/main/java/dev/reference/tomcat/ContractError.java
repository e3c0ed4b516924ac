package dev.reference.tomcat;

/**
 * A contract status other than 200, thrown by handlers and backends and written by
 * {@link ErrorReplies}. The shared instances carry no stack trace: they are control flow on hot
 * paths (a malformed id, a missing row, a backend that is down), not bugs.
 */
final class ContractError extends RuntimeException {

    static final ContractError BAD_REQUEST = new ContractError(400, null);
    static final ContractError NOT_FOUND = new ContractError(404, null);
    static final ContractError UNAVAILABLE = new ContractError(503, null);

    final int status;

    private ContractError(int status, Throwable cause) {
        super("HTTP " + status, cause, false, false);
        this.status = status;
    }

    /** A 503 that remembers why, for the log line: the backend is down, refuses, or is too slow. */
    static ContractError unavailable(Throwable cause) {
        return new ContractError(503, cause);
    }

    /**
     * A 500 that remembers why: the backend answered, with an error (a Redis error reply, an SQL
     * error). Not an outage, so not a 503 (CONTRACT.md, Routing order).
     */
    static ContractError failed(Throwable cause) {
        return new ContractError(500, cause);
    }
}
