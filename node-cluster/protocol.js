// Protocol hygiene (CONTRACT.md): the node:http settings that bound what a client may send, and
// the answer to a request that Node's parser (llhttp) refuses. README.md, "Protocol hygiene",
// says what each setting does; NOTES.md what was observed.
import { refusal } from './respond.js';
import { methodStatus, versionStatus } from './validity.js';

// The contract's limit on a request line (`METHOD SP target SP HTTP/1.1`): longer is 414.
export const MAX_REQUEST_LINE = 8192;
// llhttp's one size limit. Node counts only the request target, field names and field values
// against it (not the method, version, colons, spaces or CRLFs) and refuses a head once they reach
// it, with HPE_HEADER_OVERFLOW. 12 KiB sits between the contract's two bounds: a head of at most
// 8,192 bytes is always under it, and a head over 16,384 bytes is over it unless it has more than
// about a thousand header lines (whose separators are not counted).
const MAX_HEADER_SIZE = 12 * 1024;
// The whole request, body included (Node's requestTimeout; it must not be below headersTimeout).
const REQUEST_TIMEOUT_MS = 30_000;
// After a refusal: how long the connection keeps reading (and dropping) what the client still
// sends, so that closing it does not reset the connection before the client has read the answer.
const LINGER_MS = 1000;

export function serverOptions({ headTimeoutMs, idleTimeoutMs, optimizeEmptyRequests }) {
  return {
    maxHeaderSize: MAX_HEADER_SIZE,
    // Node's default, stated so that NODE_OPTIONS=--insecure-http-parser cannot turn on lenient
    // parsing (which accepts, among others, Transfer-Encoding with Content-Length).
    insecureHTTPParser: false,
    // Node's default, stated: an HTTP/1.1 request without Host is answered 400 and closed. Other
    // Host faults (a second line, an invalid value) are validity.js's.
    requireHostHeader: true,
    // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3): Node then
    // hands it over with its body stream already ended instead of running the stream's events.
    // Requests with a body still take the ordinary path and have it read and dropped. On by
    // default (config.js, OPTIMIZE_EMPTY_REQUESTS; README, Tuning).
    optimizeEmptyRequests,
    // A head must be complete within HEAD_TIMEOUT_MS of its first byte (of the connection's start
    // for its first request), however slowly it trickles in...
    headersTimeout: headTimeoutMs,
    requestTimeout: Math.max(REQUEST_TIMEOUT_MS, headTimeoutMs),
    // ...checked this often (Node's default is every 30 s, so a 20 s limit would act at 20–50 s).
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(headTimeoutMs / 10))),
    // A kept-alive connection silent this long is closed (Node adds 1 s before it acts, and
    // advertises `Keep-Alive: timeout=<s>`).
    keepAliveTimeout: idleTimeoutMs,
  };
}

// The request line's length on the wire, for a request the parser accepted: llhttp allows a
// request line up to MAX_HEADER_SIZE, so the 414 for one between that and the contract's limit is
// given where the request is routed.
export const requestLineLength = (req) => req.method.length + req.url.length + 10; // 2 SP, HTTP/1.x

const kRefused = Symbol('node-cluster.refused');
const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

// The server's `clientError` event: a parse error, a head or request timeout, or a socket error
// on a connection. Node's default writes a bare status line and destroys the socket at once; here
// the refusal carries the contract's headers and body, comes after the answers to requests
// pipelined before it, and the connection is closed gracefully.
// Workaround: Node's own refusal is bare and drops owed answers (README, Workarounds)
export function onClientError(err, socket) {
  // An errored parser reports every later chunk of the connection again: answer only once.
  if (socket[kRefused]) return;
  socket[kRefused] = true;
  const status = refusalStatus(err, socket);
  if (status === 0 || !socket.writable) {
    socket.destroy();
    return;
  }
  refuseAfterPending(socket, status);
}

export function refusalStatus(err, socket) {
  switch (err.code) {
    // Workaround: no request-line limit in Node; 414 told from 431 here (README, Workarounds)
    case 'HPE_HEADER_OVERFLOW':
      return requestLineTooLong(err.rawPacket) ? 414 : 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // A connection that never sent a byte is just closed: there is no request to answer.
      return socket.bytesRead === 0 ? 0 : 408;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    // Workaround: llhttp gives one code for unknown and malformed methods, versions (README, Workarounds)
    case 'HPE_INVALID_METHOD':
      return methodStatus(err.rawPacket, err.bytesParsed);
    case 'HPE_INVALID_VERSION':
      return versionStatus(err.rawPacket, err.bytesParsed);
    default:
      // Every other llhttp error is a malformed request; anything else (ECONNRESET, EPIPE, ...)
      // is the socket failing, with nobody left to answer.
      return typeof err.code === 'string' && err.code.startsWith('HPE_') ? 400 : 0;
  }
}

// Node's parser has one limit for the whole head, so a head it gave up on is told apart by the
// chunk it gave up in (err.rawPacket, what the last read returned): if that chunk begins with a
// request line (`METHOD SP`) and holds no line end, the parser was still in the request line; if
// its first line ends, that line's length decides. Otherwise the fields are what was too large.
export function requestLineTooLong(chunk) {
  if (!Buffer.isBuffer(chunk)) return false;
  const sp = chunk.indexOf(0x20);
  if (sp < 1 || sp > 32 || !METHOD.test(chunk.latin1Slice(0, sp))) return false;
  const lf = chunk.indexOf(0x0a, sp);
  if (lf === -1) return true;
  return (chunk[lf - 1] === 0x0d ? lf - 1 : lf) > MAX_REQUEST_LINE;
}

// The server's `connect` event: CONNECT (a tunnel) is served for no target here, so it is answered
// 501 (RFC 9110 §15.6.2) and closed. Node hands the socket over without its parser and listeners
// (without a listener it destroys the socket unanswered): what the client still sends is dropped.
export function onConnect(req, socket) {
  socket.on('error', () => socket.destroy());
  socket.resume();
  refuseAfterPending(socket, 501);
}

// The newest response on each connection. Node answers pipelined requests in order and a
// response's 'finish' comes once its bytes are handed to the socket, so once the newest one is
// done every answer owed before a refusal has been written. Set for every request by onRequest
// (worker.js); a property of the connection's socket, read by nothing but refuseAfterPending.
const kLastResponse = Symbol('node-cluster.lastResponse');
export function noteResponse(req, res) {
  req.socket[kLastResponse] = res;
}

// Answers still owed to earlier pipelined requests go first: the refusal waits for the newest
// response's 'close' (after its 'finish', or when its connection failed). Then the refusal, then a
// half-close; what the client still sends is read into the errored parser, which drops it, until
// it closes its side (Node then destroys the socket) or LINGER_MS pass.
function refuseAfterPending(socket, status) {
  const last = socket[kLastResponse];
  if (last !== undefined && !last.writableFinished) {
    last.once('close', () => refuse(socket, status));
    return;
  }
  refuse(socket, status);
}

function refuse(socket, status) {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(refusal(status));
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(linger));
}
