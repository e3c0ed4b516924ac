// What each backend module calls "unavailable" (503) and what a backend error (500): memcache.js
// against a scripted memcached on a loopback port, and the Redis and MariaDB rules.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { ReplyError } from 'ioredis';
import { createMemcache } from '../memcache.js';
import { BUSY_ERRNOS, isUnavailable } from '../mysql.js';
import { unavailable as redisUnavailable } from '../redis.js';
import { Unavailable } from '../unavailable.js';

// A memcached that answers `get greeting:<id>` from a script: a reply string, or 'hang' (read and
// never answer), or 'close' (hang up).
const value = 'Hej, 小明 🎉 #1';
const script = {
  'greeting:1': `VALUE greeting:1 0 ${Buffer.byteLength(value)}\r\n${value}\r\nEND\r\n`,
  'greeting:2': 'END\r\n',
  'greeting:3': 'SERVER_ERROR out of memory storing object\r\n',
  'greeting:4': 'ERROR\r\n',
  'greeting:5': 'CLIENT_ERROR bad command line format\r\n',
  'greeting:6': 'hang',
  'greeting:7': 'close',
};
let fake;
let port;
before(async () => {
  fake = net.createServer((socket) => {
    let buffered = '';
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      let end;
      while ((end = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const [command, key] = line.split(' ');
        if (command === 'version') socket.write('VERSION 1.6.0\r\n');
        else if (command === 'get') {
          const reply = script[key] ?? 'END\r\n';
          if (reply === 'close') socket.destroy();
          else if (reply !== 'hang') socket.write(Buffer.from(reply, 'utf8'));
        }
      }
    });
    socket.on('error', () => {});
  });
  await new Promise((resolve) => fake.listen(0, '127.0.0.1', resolve));
  port = fake.address().port;
});
after(() => fake.close());

const client = () => createMemcache({ host: '127.0.0.1', port, timeoutMs: 300, connections: 1 });

test('memcache: a value, its bytes as UTF-8', async () => {
  const mc = client();
  await mc.ready();
  assert.equal(await mc.get('1'), value);
  await mc.close();
});

test('memcache: a miss is null', async () => {
  const mc = client();
  assert.equal(await mc.get('2'), null);
  await mc.close();
});

for (const id of ['3', '4', '5']) {
  test(`memcache: an error reply (${script[`greeting:${id}`].trim()}) is a 500, not Unavailable`, async () => {
    const mc = client();
    await assert.rejects(mc.get(id), (err) => !(err instanceof Unavailable));
    await mc.close();
  });
}

test('memcache: no reply within the timeout is Unavailable, and the next read is served', async () => {
  const mc = client();
  const start = Date.now();
  await assert.rejects(mc.get('6'), Unavailable);
  assert.ok(Date.now() - start < 2000);
  assert.equal(await mc.get('1'), value);
  await mc.close();
});

test('memcache: a connection closed under a read is Unavailable', async () => {
  const mc = client();
  await assert.rejects(mc.get('7'), Unavailable);
  await mc.close();
});

test('memcache: a refused connection is Unavailable', async () => {
  const closed = net.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const deadPort = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const mc = createMemcache({ host: '127.0.0.1', port: deadPort, timeoutMs: 300, connections: 1 });
  await assert.rejects(mc.get('1'), Unavailable);
  await mc.close();
});

test('mysql: the server errors that mean "cannot serve now", exactly', () => {
  assert.deepEqual([...BUSY_ERRNOS].sort(), [1040, 1053, 1205, 1317, 1927, 1969]);
  for (const errno of BUSY_ERRNOS) assert.equal(isUnavailable({ errno }), true, String(errno));
  for (const errno of [1045, 1064, 1146, 1054, 1062, 2013]) assert.equal(isUnavailable({ errno }), false, String(errno));
  assert.equal(isUnavailable({ fatal: true, code: 'PROTOCOL_CONNECTION_LOST' }), true);
  assert.equal(isUnavailable({ fatal: true, code: 'ECONNREFUSED' }), true);
});

test('redis: busy replies and connection failures are Unavailable, other replies are 500', () => {
  for (const message of ['LOADING Redis is loading', 'BUSY Redis is busy', 'MASTERDOWN Link down', 'TRYAGAIN x', 'CLUSTERDOWN x']) {
    assert.ok(redisUnavailable(new ReplyError(message)) instanceof Unavailable, message);
  }
  for (const message of ['ERR unknown command', 'NOPERM no', 'WRONGTYPE Operation', 'LOADINGX not busy']) {
    const err = new ReplyError(message);
    assert.equal(redisUnavailable(err), err, message);
  }
  assert.ok(redisUnavailable(new Error('Connection is closed.')) instanceof Unavailable);
  assert.ok(redisUnavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false")) instanceof Unavailable);
});
