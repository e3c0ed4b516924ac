// The one error a backend module throws for "cannot be served now": the backend is down,
// refusing, overloaded or slower than BACKEND_TIMEOUT_MS. The server answers it with 503; any
// other error (a Redis error reply, a SQL error, a bug) is a 500, as the contract says.
export class Unavailable extends Error {
  constructor(backend, cause) {
    super(`${backend}: ${cause?.message ?? cause}`, { cause });
    this.name = 'Unavailable';
  }
}
