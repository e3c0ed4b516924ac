// Request validity (validity.js, and protocol.js's clientError and connect listeners): the pure
// functions, then the verifier's validity cases end to end on a loopback node:http server set up
// as worker.js sets it up.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { noteResponse, onClientError, onConnect, refusalStatus, serverOptions } from '../protocol.js';
import { error } from '../respond.js';
import { MAX_METHOD, methodStatus, requestStatus, validHost, versionStatus } from '../validity.js';

test('validHost: uri-host [":" port]', () => {
  for (const host of ['verify', 'verify:8080', 'verify:', '127.0.0.1', '127.0.0.1:18001', '[::1]', '[::1]:8080',
    '[2001:db8::7]:80', '[v1.fe80::a+en1]', 'xn--bcher-kva.example', 'a%2Db', "a!$&'()*+;=b"]) {
    assert.equal(validHost(host), true, host);
  }
  for (const host of ['', ':80', 'user@verify', 'u:p@verify', 'verify/x', 'verify, other', 'verify,other', 'ver ify',
    'verify:8o', 'verify:80:80', '[::1', '::1', '[verify]', '[::1%25eth0]', '[::1]x', 'a%2', 'a%zz', 'verify?x',
    'verify#x', 'vérify']) {
    assert.equal(validHost(host), false, JSON.stringify(host));
  }
});

const req = (fields) => ({ httpVersionMajor: 1, httpVersionMinor: 1, method: 'GET', url: '/hello', rawHeaders: ['Host', 'verify'], ...fields });

test('requestStatus: Host', () => {
  assert.equal(requestStatus(req({})), 0);
  assert.equal(requestStatus(req({ rawHeaders: ['host', 'verify:8080', 'Accept', '*/*'] })), 0);
  assert.equal(requestStatus(req({ rawHeaders: ['HOST', '[::1]:8080'] })), 0);
  assert.equal(requestStatus(req({ rawHeaders: ['Host', 'verify', 'Host', 'verify'] })), 400, 'two lines, same value');
  assert.equal(requestStatus(req({ rawHeaders: ['Host', 'verify', 'hOsT', 'other'] })), 400, 'two lines, different');
  assert.equal(requestStatus(req({ rawHeaders: ['Host', 'user@verify'] })), 400);
  assert.equal(requestStatus(req({ rawHeaders: ['Host', 'verify/x'] })), 400);
  assert.equal(requestStatus(req({ rawHeaders: ['Host', 'verify, other'] })), 400);
  assert.equal(requestStatus(req({ rawHeaders: ['Host', ''] })), 400);
  assert.equal(requestStatus(req({ rawHeaders: ['Hosts', 'x', 'X-Host', 'y', 'Host', 'verify'] })), 0, 'other names');
  assert.equal(requestStatus(req({ httpVersionMinor: 0, rawHeaders: [] })), 0, 'HTTP/1.0 may omit Host');
  assert.equal(requestStatus(req({ httpVersionMinor: 0, rawHeaders: ['Host', 'a, b'] })), 400, 'but not send a bad one');
});

test('requestStatus: version', () => {
  assert.equal(requestStatus(req({ httpVersionMajor: 2, httpVersionMinor: 0 })), 505);
  assert.equal(requestStatus(req({ httpVersionMajor: 0, httpVersionMinor: 9 })), 505);
  assert.equal(requestStatus(req({ httpVersionMajor: 2, rawHeaders: [] })), 505, 'before the Host rules');
});

test('requestStatus: target forms', () => {
  assert.equal(requestStatus(req({ url: '*' })), 400);
  assert.equal(requestStatus(req({ url: '*', method: 'HEAD' })), 400);
  assert.equal(requestStatus(req({ url: '*', method: 'OPTIONS' })), 0);
  const absolute = (url) => {
    const r = req({ url });
    return [requestStatus(r), r.url];
  };
  assert.deepEqual(absolute('http://verify/hello'), [0, '/hello']);
  assert.deepEqual(absolute('HTTP://verify:80/redis?id=1'), [0, '/redis?id=1']);
  assert.deepEqual(absolute('https://[::1]:8443/hello'), [0, '/hello']);
  assert.deepEqual(absolute('http://verify'), [0, '/']);
  assert.deepEqual(absolute('http://verify?id=1'), [0, '/?id=1']);
  assert.deepEqual(absolute('http://user@verify/hello')[0], 400);
  assert.deepEqual(absolute('http:///hello')[0], 400, 'no host');
  assert.deepEqual(absolute('ftp://verify/hello')[0], 400);
  assert.deepEqual(absolute('verify:80')[0], 400);
});

test('methodStatus: a token llhttp does not know is 501, anything else 400', () => {
  const b = (s) => Buffer.from(s, 'latin1');
  assert.equal(methodStatus(b('GE{T /hello HTTP/1.1\r\n'), 2), 400);
  assert.equal(methodStatus(b('BAD\r\n\r\n'), 1), 400, 'no target');
  assert.equal(methodStatus(b('\x01GET /hello HTTP/1.1\r\n'), 0), 400);
  assert.equal(methodStatus(b(`${'G'.repeat(MAX_METHOD + 1)} /hello HTTP/1.1\r\n`), 1), 501);
  assert.equal(methodStatus(b(`${'G'.repeat(MAX_METHOD + 1)}{ /hello HTTP/1.1\r\n`), 1), 501, 'over the bound already');
  assert.equal(methodStatus(b('G'.repeat(65536)), 1), 501, 'a 100 kB method: its first read');
  assert.equal(methodStatus(b('FOO /hello HTTP/1.1\r\n'), 1), 501);
  assert.equal(methodStatus(b('get /hello HTTP/1.1\r\n'), 0), 501, 'methods are case-sensitive');
  assert.equal(methodStatus(b('FO'), 1), 501, 'a token so far when the read ends');
  const first = 'GET /hello HTTP/1.1\r\nHost: x\r\n\r\n';
  assert.equal(methodStatus(b(`${first}GE{T /hello HTTP/1.1\r\n`), first.length + 2), 400, 'pipelined');
  assert.equal(methodStatus(b(`${first}FOO /hello HTTP/1.1\r\n`), first.length + 1), 501, 'pipelined');
  assert.equal(methodStatus(b('FOO /x'), 99), 501, 'a position past the read');
  assert.equal(methodStatus(undefined, 0), 400);
});

test('versionStatus: another major is 505, a malformed version 400', () => {
  const at = (line) => [Buffer.from(`${line}\r\nHost: x\r\n\r\n`), line.length];
  assert.equal(versionStatus(...at('GET /hello HTTP/3.0')), 505);
  assert.equal(versionStatus(...at('GET /hello HTTP/9.9')), 505);
  assert.equal(versionStatus(...at('GET /hello HTTP/1.2')), 400);
  assert.equal(versionStatus(...at('GET /hello HTTP/1')), 400);
  assert.equal(versionStatus(...at('GET /hello HTTP/01.01')), 400);
  assert.equal(versionStatus(...at('GET /hello HTTP/13.0')), 400);
  assert.equal(versionStatus(Buffer.from('GET /hello HTTP/3.0'), 19), 505, 'no line end yet');
  assert.equal(versionStatus(undefined, 0), 400);
});

test('refusalStatus hands llhttp method and version errors to validity.js', () => {
  const socket = { bytesRead: 10 };
  const err = (code, text, bytesParsed) => ({ code, rawPacket: Buffer.from(text), bytesParsed });
  assert.equal(refusalStatus(err('HPE_INVALID_METHOD', 'GE{T / HTTP/1.1\r\n', 2), socket), 400);
  assert.equal(refusalStatus(err('HPE_INVALID_METHOD', `${'G'.repeat(33)} / HTTP/1.1\r\n`, 1), socket), 501);
  assert.equal(refusalStatus(err('HPE_INVALID_VERSION', 'GET / HTTP/3.0\r\n', 14), socket), 505);
  assert.equal(refusalStatus(err('HPE_INVALID_VERSION', 'GET / HTTP/1\r\n', 12), socket), 400);
});

// End to end: the verifier's validity cases (loadtest/harness/contract/protocol.py), each with the
// status it must get, or 200 for one that is served. The comment says who decides.
let server;
let port;

before(async () => {
  server = http.createServer(serverOptions({ headTimeoutMs: 2000, idleTimeoutMs: 5000, optimizeEmptyRequests: true }),
    (request, res) => {
      noteResponse(request, res);
      const status = requestStatus(request);
      if (status !== 0) return error(res, status, { Connection: 'close' });
      const body = request.url;
      res.writeHead(200, { 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  server.on('clientError', onClientError);
  server.on('connect', onConnect);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

// Sends `data` and resolves with everything the server sent and whether it closed the connection
// within `ms`.
function exchange(data, ms = 1000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: false });
    }, ms);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed: true });
    });
    socket.write(Buffer.from(data, 'latin1'));
  });
}

const line = (requestLine, host = 'verify', more = '') =>
  `${requestLine}\r\n${host === null ? '' : `Host: ${host}\r\n`}${more}\r\n`;
const hello = (host, more) => line('GET /hello HTTP/1.1', host, more);

const CASES = [
  ['HTTP/1.1 without Host', hello(null), 400], // Node: requireHostHeader
  ['two Host lines, the same value', hello('verify', 'Host: verify\r\n'), 400], // requestStatus
  ['two Host lines, different values', hello('verify', 'Host: other\r\n'), 400], // requestStatus
  ['Host with userinfo', hello('user@verify'), 400], // requestStatus
  ['Host with a path', hello('verify/x'), 400], // requestStatus
  ['Host holding a list', hello('verify, other'), 400], // requestStatus
  ['an empty Host', hello(''), 400], // requestStatus
  ['Host with a port', hello('verify:8080'), 200],
  ['Host as an IPv6 literal', hello('[::1]:8080'), 200],
  ['Host as an IPv4 address', hello('127.0.0.1'), 200],
  ['HTTP/1.0 without Host', line('GET /hello HTTP/1.0', null), 200],
  ['asterisk-form with GET', line('GET * HTTP/1.1'), 400], // requestStatus
  ['authority-form with GET', line('GET verify:80 HTTP/1.1'), 400], // llhttp
  ['absolute-form', line('GET http://verify/hello HTTP/1.1'), 200, '/hello'], // requestStatus rewrites
  ['a raw byte above 0x7F in the target', line('GET /hello\xff HTTP/1.1'), 400], // llhttp
  ['overlong UTF-8 in the target', line('GET /hello/\xc0\xaf HTTP/1.1'), 400], // llhttp
  ['a NUL in the target', line('GET /hel\x00lo HTTP/1.1'), 400], // llhttp
  ['a control byte in the target', line('GET /hel\x01lo HTTP/1.1'), 400], // llhttp
  ['a method that is not a token', line('GE{T /hello HTTP/1.1'), 400], // methodStatus
  ['CONNECT', line('CONNECT verify:443 HTTP/1.1', 'verify:443'), 501], // onConnect
  ['a 33-byte method token', line(`${'G'.repeat(33)} /hello HTTP/1.1`), 501], // methodStatus
  ['a 100 kB method token', line(`${'G'.repeat(100_000)} /hello HTTP/1.1`), 501], // methodStatus
  ['lower-case version', line('GET /hello http/1.1'), 400], // llhttp
  ['version without a minor', line('GET /hello HTTP/1'), 400], // llhttp, versionStatus
  ['version with leading zeros', line('GET /hello HTTP/01.01'), 400], // llhttp, versionStatus
  ['another major version (HTTP/2.0)', line('GET /hello HTTP/2.0'), 505], // requestStatus
  ['another major version (HTTP/3.0)', line('GET /hello HTTP/3.0'), 505], // versionStatus
  ['an obs-fold continuation line', hello('verify', 'X-Probe: 1\r\n Connection: close\r\n'), 400], // llhttp
  ['a field line without a colon', hello('verify', 'X-Probe\r\n'), 400], // llhttp
  ['a field name with a byte above 0x7F', hello('verify', 'X-Pr\xf6be: 1\r\n'), 400], // llhttp
  ['a NUL in a field value', hello('verify', 'X-Probe: a\x00b\r\n'), 400], // llhttp
];

for (const [name, data, status, body] of CASES) {
  test(`end to end: ${name} → ${status}`, async () => {
    const { text, closed } = await exchange(data, status === 200 ? 300 : 1000);
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    assert.deepEqual(statuses, [status], text);
    if (body !== undefined) assert.ok(text.endsWith(`\r\n\r\n${body}`), text);
    if (status !== 200) {
      assert.match(text, /\r\nConnection: close\r\n/);
      assert.ok(closed, 'closed after the refusal');
    }
  });
}

test('CONNECT after a pipelined request: its answer first, then the 501', async () => {
  const { text, closed } = await exchange(hello('verify') + line('CONNECT verify:443 HTTP/1.1', 'verify:443'));
  assert.deepEqual([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]), ['200', '501']);
  assert.ok(closed);
});

test('a refusal of a parsed request ends the connection: what follows is not answered', async () => {
  const { text, closed } = await exchange(line('GET * HTTP/1.1') + hello('verify'));
  assert.deepEqual([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]), ['400']);
  assert.ok(closed);
});
