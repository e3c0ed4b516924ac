// Request validity (CONTRACT.md, "Request validity"): the rules node:http leaves to the application.
// Node and llhttp refuse by themselves an HTTP/1.1 request without Host (requireHostHeader), a
// target byte RFC 3986 does not allow, authority-form without CONNECT, a malformed version, obs-fold,
// a field line without a colon and NUL in a value; CONNECT goes to the server's 'connect' event
// (protocol.js). What is left is decided here: on the parsed request (requestStatus), or on the
// bytes of a request line llhttp gave up on (methodStatus, versionStatus). README.md, Workarounds.
import { isIPv6 } from 'node:net';

// RFC 9112 §3: a method longer than any the server implements gets 501 (the contract's bound).
export const MAX_METHOD = 32;

// uri-host [":" port] (RFC 9112 §3.2, RFC 3986 §3.2.2): an IP-literal in brackets, or a non-empty
// reg-name (an IPv4 address is one) without the comma, which only a list of hosts holds.
const HOST = /^(?:\[([^\]]*)\]|(?:[A-Za-z0-9\-._~!$&'()*+;=]|%[0-9A-Fa-f]{2})+)(?::[0-9]*)?$/;
const IPV_FUTURE = /^v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/;

export function validHost(value) {
  const m = HOST.exec(value);
  if (m === null) return false;
  const literal = m[1];
  // IPv6address (no zone identifier) or IPvFuture
  return literal === undefined || (isIPv6(literal) && !literal.includes('%')) || IPV_FUTURE.test(literal);
}

// absolute-form (RFC 9112 §3.2.2): the authority, then the path and query that are served.
const ABSOLUTE = /^https?:\/\/([^/?]*)(.*)$/i;

// The refusal a parsed request gets (400 or 505), or 0 to serve it. An absolute-form target is
// rewritten to its origin-form in req.url (the Host field is then ignored, as RFC 9112 §3.2.2 says,
// but must still be valid).
export function requestStatus(req) {
  // llhttp accepts HTTP/0.9 and HTTP/2.0 on a request line besides 1.0 and 1.1
  if (req.httpVersionMajor !== 1) return 505;
  // exactly one Host line (rawHeaders holds every line; req.headers keeps only the first Host)
  const raw = req.rawHeaders;
  let host;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 4 && (name === 'Host' || name.toLowerCase() === 'host')) {
      if (host !== undefined) return 400;
      host = raw[i + 1];
    }
  }
  // no Host: HTTP/1.0 may omit it; Node has already refused HTTP/1.1 without one
  if (host !== undefined && !validHost(host)) return 400;
  const url = req.url;
  if (url.charCodeAt(0) === 0x2f) return 0; // origin-form: the common case
  // llhttp accepts asterisk-form with every method (RFC 9112 §3.2.4: OPTIONS only)
  if (url === '*') return req.method === 'OPTIONS' ? 0 : 400;
  const m = ABSOLUTE.exec(url);
  if (m === null || !validHost(m[1])) return 400;
  const rest = m[2];
  req.url = rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`;
  return 0;
}

// tchar (RFC 9110 §5.6.2), by byte
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TCHAR[c.charCodeAt(0)] = 1;
}

// For llhttp's HPE_INVALID_METHOD: llhttp knows a fixed list of methods and refuses any other one
// with that one code, a token or not. `chunk` is the read it gave up in (err.rawPacket), `at` where
// (err.bytesParsed), within the method. A token (RFC 9110 §9.1: a method the server does not
// recognize; RFC 9112 §3: one longer than MAX_METHOD) is 501; anything else is not a request line: 400.
export function methodStatus(chunk, at) {
  if (!Buffer.isBuffer(chunk)) return 400;
  at = Math.min(Math.max(at | 0, 0), chunk.length);
  // the request line starts after the previous message's last line end, if this read holds one
  const start = at > 0 ? chunk.lastIndexOf(0x0a, at - 1) + 1 : 0;
  let end = start;
  while (end < chunk.length && end - start <= MAX_METHOD && TCHAR[chunk[end]] === 1) end++;
  if (end === start) return 400;
  // longer than MAX_METHOD, followed by its space, or still going when the read ends
  return end - start > MAX_METHOD || end === chunk.length || chunk[end] === 0x20 ? 501 : 400;
}

// For llhttp's HPE_INVALID_VERSION: llhttp refuses every version but 0.9, 1.0, 1.1 and 2.0 with
// that one code, well-formed or not. A well-formed version of another major (`HTTP/3.0`) is 505
// (RFC 9110 §15.6.6); the rest (`HTTP/1`, `HTTP/01.01`, `HTTP/1.2`) is 400.
const VERSION_TAIL = /^ HTTP\/([0-9])\.[0-9]$/;
export function versionStatus(chunk, at) {
  if (!Buffer.isBuffer(chunk)) return 400;
  at = Math.min(Math.max(at | 0, 0), chunk.length);
  const lf = chunk.indexOf(0x0a, at);
  let end = lf === -1 ? chunk.length : lf;
  if (end > 0 && chunk[end - 1] === 0x0d) end--;
  const m = VERSION_TAIL.exec(chunk.latin1Slice(Math.max(0, end - 9), end));
  return m !== null && m[1] !== '1' ? 505 : 400;
}
