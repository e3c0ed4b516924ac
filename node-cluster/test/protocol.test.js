// The refusal writer (protocol.js): a real node:http server on a loopback port with the stack's
// settings, spoken to over raw sockets.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { noteResponse, onClientError, refusalStatus, requestLineTooLong, serverOptions } from '../protocol.js';

let server;
let port;

before(async () => {
  server = http.createServer(serverOptions({ headTimeoutMs: 300, idleTimeoutMs: 5000, optimizeEmptyRequests: true }),
    (req, res) => {
      noteResponse(req, res);
      const body = req.url === '/slow' ? 'slow' : 'ok';
      const answer = () => {
        res.writeHead(200, { 'Content-Length': body.length });
        res.end(body);
      };
      if (req.url === '/slow') setTimeout(answer, 100);
      else answer();
    });
  server.on('clientError', onClientError);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

// Sends `data` (a string or a list of chunks written 20 ms apart) and resolves with everything the
// server sent until it closed the connection, and how long that took.
function exchange(data) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    const start = Date.now();
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: Date.now() - start }));
    const parts = Array.isArray(data) ? data : [data];
    parts.forEach((part, i) => setTimeout(() => socket.write(part), i * 20));
    setTimeout(() => socket.end(), parts.length * 20 + 600);
  });
}

const statusLines = (text) => [...text.matchAll(/HTTP\/1\.1 \d{3} [^\r]*/g)].map((m) => m[0]);

function assertRefusal(text, status, reason) {
  const at = text.lastIndexOf('HTTP/1.1 ');
  const refusalText = text.slice(at);
  assert.match(refusalText, new RegExp(`^HTTP/1.1 ${status} ${reason}\r\n`));
  assert.match(refusalText, /\r\nContent-Type: text\/plain; charset=utf-8\r\n/);
  assert.match(refusalText, new RegExp(`\r\nContent-Length: ${reason.length}\r\n`));
  assert.match(refusalText, /\r\nDate: .+ GMT\r\n/);
  assert.match(refusalText, /\r\nServer: node-cluster\r\n/);
  assert.match(refusalText, /\r\nConnection: close\r\n\r\n/);
  assert.ok(refusalText.endsWith(`\r\n\r\n${reason}`), 'the body ends the connection');
}

test('a framing error is a 400 with the contract headers, then close', async () => {
  const { text } = await exchange('GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
  assert.deepEqual(statusLines(text), ['HTTP/1.1 400 Bad Request']);
  assertRefusal(text, 400, 'Bad Request');
});

test('space before the colon is a 400', async () => {
  const { text } = await exchange('GET /hello HTTP/1.1\r\nHost : x\r\n\r\n');
  assertRefusal(text, 400, 'Bad Request');
});

test('fields over maxHeaderSize are a 431', async () => {
  const { text } = await exchange(`GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`);
  assertRefusal(text, 431, 'Request Header Fields Too Large');
});

test('a request line over maxHeaderSize is a 414, not a 431', async () => {
  const { text } = await exchange(`GET /hello?${'a'.repeat(13_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertRefusal(text, 414, 'URI Too Long');
});

test('oversized chunk extensions are a 413', async () => {
  const { text } = await exchange(['POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
    `1;${'e'.repeat(20_000)}\r\n`]);
  assertRefusal(text, 413, 'Content Too Large');
});

test('a head that does not complete in time is a 408', async () => {
  const { text, ms } = await exchange(['GET /hello HTTP/1.1\r\n', 'Host: x\r\n']);
  assertRefusal(text, 408, 'Request Timeout');
  assert.ok(ms >= 300, `closed after ${ms} ms, before the 300 ms head timeout`);
});

test('a connection that sent nothing is closed without an answer', async () => {
  const { text } = await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1') }));
  });
  assert.equal(text, '');
});

test('a refusal waits for the answers owed to requests pipelined before it', async () => {
  const { text } = await exchange('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n' +
    'GET /fast HTTP/1.1\r\nHost: x\r\n\r\n' +
    'GET /hello HTTP/1.1\r\nHost : x\r\n\r\n');
  assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
  assert.ok(text.indexOf('\r\n\r\nslow') < text.indexOf('\r\n\r\nok'), 'answers in request order');
  assertRefusal(text, 400, 'Bad Request');
});

test('a refusal after answers already sent goes out at once', async () => {
  const { text } = await exchange(['GET /fast HTTP/1.1\r\nHost: x\r\n\r\n', 'BAD\r\n\r\n']);
  assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
});

test('refusalStatus: llhttp codes, timeouts and socket errors', () => {
  const socket = { bytesRead: 10 };
  assert.equal(refusalStatus({ code: 'HPE_INVALID_HEADER_TOKEN' }, socket), 400);
  assert.equal(refusalStatus({ code: 'HPE_UNEXPECTED_CONTENT_LENGTH' }, socket), 400);
  assert.equal(refusalStatus({ code: 'HPE_CHUNK_EXTENSIONS_OVERFLOW' }, socket), 413);
  assert.equal(refusalStatus({ code: 'HPE_HEADER_OVERFLOW', rawPacket: Buffer.from('X: y\r\n') }, socket), 431);
  assert.equal(refusalStatus({ code: 'ERR_HTTP_REQUEST_TIMEOUT' }, socket), 408);
  assert.equal(refusalStatus({ code: 'ERR_HTTP_REQUEST_TIMEOUT' }, { bytesRead: 0 }), 0);
  assert.equal(refusalStatus({ code: 'ECONNRESET' }, socket), 0);
  assert.equal(refusalStatus({ code: 'EPIPE' }, socket), 0);
  assert.equal(refusalStatus(new Error('no code'), socket), 0);
});

test('requestLineTooLong: told apart by the chunk the parser gave up in', () => {
  const line = (n) => `GET /${'a'.repeat(n - 'GET / HTTP/1.1'.length)} HTTP/1.1`;
  assert.equal(line(8192).length, 8192);
  assert.equal(requestLineTooLong(Buffer.from(`${line(8192)}\r\nHost: x\r\n`)), false);
  assert.equal(requestLineTooLong(Buffer.from(`${line(8193)}\r\nHost: x\r\n`)), true);
  assert.equal(requestLineTooLong(Buffer.from(`${line(8193)}\nHost: x\n`)), true);
  assert.equal(requestLineTooLong(Buffer.from(`${line(8192)}\nHost: x\n`)), false);
  assert.equal(requestLineTooLong(Buffer.from(`GET /${'a'.repeat(100)}`)), true, 'no line end yet: still in the request line');
  assert.equal(requestLineTooLong(Buffer.from(`X-Big: ${'a'.repeat(20_000)}`)), false, 'a field, not a request line');
  assert.equal(requestLineTooLong(Buffer.from(` GET /${'a'.repeat(9000)}`)), false);
  assert.equal(requestLineTooLong(Buffer.from(`G(T /${'a'.repeat(9000)}`)), false, 'not a method token');
  assert.equal(requestLineTooLong('GET /x'), false, 'not a Buffer');
  assert.equal(requestLineTooLong(undefined), false);
});
