// The response bytes and the id rule (respond.js), against every id form in the contract's cases.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { greetingJson, parseId, refusal } from '../respond.js';

const cases = JSON.parse(readFileSync(new URL('../../shared-schema/cases.json', import.meta.url), 'utf8')).cases;

// Each case that reaches the id rule: a data path, GET or HEAD, with a query. 400 means "no id";
// 200 gives the canonical id in its body; a 404 that reads the backend was asked for the id written
// in the target.
const idCases = cases.filter((c) => /^\/(redis|mysql|memcache)\?/.test(c.target) && c.method !== 'POST');

test('the contract has id cases to check', () => {
  assert.ok(idCases.length >= 30, `only ${idCases.length} id cases in cases.json`);
});

for (const c of idCases) {
  const query = c.target.slice(c.target.indexOf('?') + 1);
  test(`parseId: ${c.name} (${c.target} → ${c.expect.status})`, () => {
    const id = parseId(query);
    if (c.expect.status === 400) {
      assert.equal(id, null);
    } else if (c.expect.status === 200 && c.method === 'GET') {
      assert.equal(id, String(JSON.parse(c.expect.body).id));
    } else {
      // HEAD (no body) and 404: the id the target names, in its canonical form.
      assert.equal(id, new URLSearchParams(query).get('id'));
      assert.match(id, /^[1-9][0-9]{0,8}$/);
    }
  });
}

test('parseId: canonical forms', () => {
  assert.equal(parseId('id=1'), '1');
  assert.equal(parseId('id=999999999'), '999999999');
  assert.equal(parseId('id=%34%32'), '42');
  assert.equal(parseId('a=b&id=7&c'), '7');
  assert.equal(parseId('id=7&'), '7');
});

test('parseId: malformed ids are refused', () => {
  for (const query of ['', 'id', 'id=', 'id=0', 'id=00', 'id=01', 'id=-0', 'id=+1', 'id=%2B1', 'id= 1',
    'id=1%20', 'id=1+', 'id=1.0', 'id=1e3', 'id=0x1', 'id=1234567890', 'id=99999999999999999999',
    'id=%zz', 'id=%', 'id=%3', 'id=１', 'id=1%00', 'ID=1', 'Id=1', 'id=1&id=1', 'id=1&id=2', 'ids=1',
    'id%3D1', '%69d=1x', 'id=abc']) {
    assert.equal(parseId(query), null, `query ${JSON.stringify(query)}`);
  }
  // A percent-encoded name is still `id`.
  assert.equal(parseId('%69d=5'), '5');
});

test('greetingJson: the contract bytes for every 200 case', () => {
  for (const c of idCases.filter((x) => x.expect.status === 200 && x.method === 'GET')) {
    const { id, message } = JSON.parse(c.expect.body);
    assert.equal(greetingJson(String(id), message), c.expect.body, c.name);
  }
});

test('refusal: status line, the four headers, Connection: close, body', () => {
  const reasons = {
    400: 'Bad Request',
    408: 'Request Timeout',
    413: 'Content Too Large',
    414: 'URI Too Long',
    431: 'Request Header Fields Too Large',
  };
  for (const [status, reason] of Object.entries(reasons)) {
    const bytes = refusal(Number(status));
    const [head, body] = bytes.split('\r\n\r\n');
    assert.equal(body, reason);
    const lines = head.split('\r\n');
    assert.equal(lines[0], `HTTP/1.1 ${status} ${reason}`);
    assert.deepEqual(lines.slice(1).map((l) => l.slice(0, l.indexOf(':'))),
      ['Content-Type', 'Content-Length', 'Date', 'Server', 'Connection']);
    assert.equal(lines[1], 'Content-Type: text/plain; charset=utf-8');
    assert.equal(lines[2], `Content-Length: ${Buffer.byteLength(reason)}`);
    assert.match(lines[3], /^Date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/);
    assert.equal(lines[4], 'Server: node-cluster');
    assert.equal(lines[5], 'Connection: close');
  }
});
