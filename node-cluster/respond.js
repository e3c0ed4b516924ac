// Response and request helpers: the exact bytes of the contract live here.

const SERVER = 'node-cluster';
const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

// The contract's error bodies, written out rather than borrowed from http.STATUS_CODES.
const REASONS = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Content Too Large',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'HTTP Version Not Supported',
};

// Content-Length is always set, so Node never chunks; for HEAD, Node sends the headers
// (Content-Length included) and drops the body. Node itself adds Date (refreshed every
// second), Connection and Keep-Alive; nothing else is added.
function send(res, status, type, body, extraHeaders) {
  const headers = {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    Server: SERVER,
  };
  if (extraHeaders !== undefined) Object.assign(headers, extraHeaders);
  res.writeHead(status, headers);
  res.end(body);
}

export function text(res, body) {
  send(res, 200, TEXT, body);
}

export function json(res, body) {
  send(res, 200, JSON_TYPE, body);
}

export function error(res, status, extraHeaders) {
  send(res, status, TEXT, REASONS[status], extraHeaders);
}

// The bytes of a refusal written straight to the socket from the server's `clientError` event,
// where Node has no ServerResponse: the same status line, headers and body a ServerResponse would
// carry, and `Connection: close`. toUTCString() is IMF-fixdate.
export function refusal(status) {
  const body = REASONS[status];
  return `HTTP/1.1 ${status} ${body}\r\n` +
    `Content-Type: ${TEXT}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Date: ${new Date().toUTCString()}\r\n` +
    `Server: ${SERVER}\r\n` +
    'Connection: close\r\n\r\n' +
    body;
}

// One to nine decimal digits, no leading zero.
const ID = /^[1-9][0-9]{0,8}$/;

// The query must hold exactly one `id` (after percent-decoding, `+` as a space); other
// parameters are ignored. Returns the id in canonical decimal, or null for a 400.
// URLSearchParams leaves a malformed escape such as %zz as it is, which then fails the pattern.
// A query that is exactly `id=<digits>` (every request of the benchmark) is read without
// URLSearchParams, which would give the same answer for it.
const ONLY_ID = /^id=([1-9][0-9]{0,8})$/;

export function parseId(query) {
  const only = ONLY_ID.exec(query);
  if (only !== null) return only[1];
  const ids = new URLSearchParams(query).getAll('id');
  return ids.length === 1 && ID.test(ids[0]) ? ids[0] : null;
}

// {"id":N,"message":"…"}: JSON.stringify gives the contract's bytes exactly. It escapes `"`, `\`,
// control characters and lone surrogates, and writes everything else as raw UTF-8 (`/`, `<`,
// `&`, CJK and emoji included); the contract's messages hold no control characters and no lone
// surrogates, and `id` is at most nine digits, so the number prints as the same decimal.
export function greetingJson(id, message) {
  return JSON.stringify({ id: Number(id), message });
}
