// A node-cluster worker: its own event loop, HTTP server and backend connections. It accepts its
// own connections on the listening socket the primary shares (server.js). Nothing blocks the
// event loop: backend reads and the /sleep timer are asynchronous, so one worker serves many
// requests at once.
import http from 'node:http';
import { createMemcache } from './memcache.js';
import { createMysql } from './mysql.js';
import { createRedis } from './redis.js';
import { MAX_REQUEST_LINE, noteResponse, onClientError, onConnect, requestLineLength, serverOptions } from './protocol.js';
import { error, greetingJson, json, parseId, text } from './respond.js';
import { Unavailable } from './unavailable.js';
import { requestStatus } from './validity.js';

const STOP_GRACE_MS = 1500; // the primary kills a worker still alive after this (server.js)
const BACKLOG = 4096; // accept queue; the kernel caps it at net.core.somaxconn

// Settles like `wait()`, or rejects with Unavailable once `ms` have passed: the start waits this
// long for each backend's first connection. (A request's deadline is `greeting`'s timer.)
function withDeadline(wait, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Unavailable('deadline', `no answer within ${ms} ms`)), ms);
    wait().then(
      (value) => { clearTimeout(timer); resolve(value); },
      (err) => { clearTimeout(timer); reject(err); },
    );
  });
}

// A backend answering with an error is logged, but at most once a second: a broken table or a
// revoked permission must not turn every request into a log line.
let lastLogged = 0;
let unlogged = 0;
function logFailure(err) {
  const now = Date.now();
  if (now - lastLogged < 1000) {
    unlogged++;
    return;
  }
  console.error(`node-cluster: 500 for a backend error${unlogged ? ` (and ${unlogged} more since the last line)` : ''}:`, err);
  lastLogged = now;
  unlogged = 0;
}

export function runWorker(config) {
  let stopping = false;
  const backends = {
    redis: createRedis(config.redis),
    mysql: createMysql(config.mysql),
    memcache: createMemcache(config.memcache),
  };

  // Anything that throws while a request is handled: logged, and a 500 if nothing was sent yet.
  function unexpected(res, err) {
    console.error('node-cluster: unexpected error:', err);
    if (res.headersSent) res.destroy();
    else error(res, 500);
  }

  // One backend read per request; the deadline covers everything, pool waits included: at
  // BACKEND_TIMEOUT_MS the request is answered 503 and the read's own outcome is ignored.
  // `deadline` (a Date.now() value) tells the read when its answer stops being wanted, so that it
  // can give back what it holds (mysql.js); the drivers' own timeouts end the work behind it.
  // Written with one timer and one `then` rather than withDeadline and async functions: each
  // promise layer costs CPU on every data request (NOTES.md, 2026-11-26).
  const greeting = (backend) => (res, query) => {
    const id = parseId(query);
    if (id === null) return error(res, 400);
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      error(res, 503);
    }, config.timeoutMs);
    backend.get(id, Date.now() + config.timeoutMs).then((message) => {
      if (late) return;
      clearTimeout(timer);
      if (message === null) error(res, 404);
      else json(res, greetingJson(id, message));
    }, (err) => {
      if (late) return;
      clearTimeout(timer);
      if (err instanceof Unavailable) return error(res, 503); // down, refusing, full
      logFailure(err);
      error(res, 500); // the backend answered with an error (the contract's "unexpected")
    }).catch((err) => unexpected(res, err));
  };

  const routes = new Map([
    ['/hello', (res) => text(res, 'Hello, World!')],
    ['/sleep', (res) => {
      setTimeout(() => text(res, 'Slept 10 ms'), 10);
    }],
    ['/redis', greeting(backends.redis)],
    ['/mysql', greeting(backends.mysql)],
    ['/memcache', greeting(backends.memcache)],
  ]);

  // Routing order: path (exact, case-sensitive) → method → parameters → backend. Before that, a
  // request line longer than the contract's limit is refused (protocol.js, requestLineLength), then
  // an invalid request (validity.js, requestStatus; an absolute-form target becomes its path).
  function onRequest(req, res) {
    noteResponse(req, res); // a refusal later on this connection waits for this answer
    if (stopping) res.setHeader('Connection', 'close'); // finish in-flight work, then hang up
    // Workaround: Node has no request-line limit; the 414 is given here (README, Workarounds)
    if (requestLineLength(req) > MAX_REQUEST_LINE) return error(res, 414, { Connection: 'close' });
    // Workaround: Node checks only that Host is present, llhttp takes any target (README, Workarounds)
    const invalid = requestStatus(req);
    if (invalid !== 0) return error(res, invalid, { Connection: 'close' });
    try {
      const q = req.url.indexOf('?');
      const handler = routes.get(q === -1 ? req.url : req.url.slice(0, q));
      if (handler === undefined) return error(res, 404);
      if (req.method !== 'GET' && req.method !== 'HEAD') return error(res, 405, { Allow: 'GET, HEAD' });
      handler(res, q === -1 ? '' : req.url.slice(q + 1));
    } catch (err) {
      unexpected(res, err);
    }
  }

  // Tuning: see README.md, "Tuning", for why and what was measured. The size and time limits
  // (HEAD_TIMEOUT_MS, IDLE_TIMEOUT_MS) and the answer to a refused request are in protocol.js.
  const server = http.createServer(serverOptions(config), onRequest);
  server.on('clientError', onClientError);
  server.on('connect', onConnect); // CONNECT: 501 and close (protocol.js)
  server.maxRequestsPerSocket = 0; // never make a keep-alive client reconnect
  server.on('error', (err) => {
    console.error(`node-cluster: cannot listen on ${config.host}:${config.port}: ${err.message}`);
    process.exit(1);
  });
  // Serve once every backend has answered, or after BACKEND_TIMEOUT_MS if one is down (its
  // requests then get 503 until it is back): the first requests never race the connections.
  Promise.allSettled(Object.values(backends).map((backend) => withDeadline(() => backend.ready(), config.timeoutMs)))
    .then(() => server.listen({ host: config.host, port: config.port, backlog: BACKLOG }));

  // Stop accepting, close idle connections, let in-flight requests finish (answered with
  // Connection: close), then close the backends; never take longer than the grace period.
  function shutdown() {
    stopping = true;
    setTimeout(() => process.exit(0), STOP_GRACE_MS - 300).unref();
    server.close(async () => {
      await Promise.allSettled(Object.values(backends).map((backend) => backend.close()));
      process.exit(0);
    });
    server.closeIdleConnections();
  }
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
