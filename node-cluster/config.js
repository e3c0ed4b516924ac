// Configuration comes from the environment only. The harness passes every variable of
// shared-schema/defaults.env, so none of those is defaulted here: a missing one is a deployment
// error and is reported by name. The stack's own tuning knobs (README, Tuning) have their
// defaults here, in TUNING.
import os from 'node:os';

const REQUIRED = [
  'HOST', 'PORT',
  'REDIS_HOST', 'REDIS_PORT',
  'MYSQL_HOST', 'MYSQL_PORT', 'MYSQL_USER', 'MYSQL_PASSWORD', 'MYSQL_DATABASE',
  'MEMCACHE_HOST', 'MEMCACHE_PORT',
  'BACKEND_TIMEOUT_MS', 'HEAD_TIMEOUT_MS', 'IDLE_TIMEOUT_MS',
];

// Each is an environment variable of the same name; the sizes are per worker.
const TUNING = {
  MYSQL_POOL_SIZE: 16,
  MEMCACHE_CONNECTIONS: 2,
  OPTIMIZE_EMPTY_REQUESTS: 1, // node:http's optimizeEmptyRequests: 1 on, 0 off
  REDIS_AUTO_PIPELINING: 1, // ioredis enableAutoPipelining: 1 on, 0 off
};
// Requests waiting for a pooled MariaDB connection, per worker: as many as the benchmark's 1,024
// connections can put on one worker, twice over; a request past it is answered 503 at once.
const MYSQL_QUEUE_LIMIT = 2048;

export class ConfigError extends Error {}

function integer(env, name, min, max) {
  const raw = env[name];
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`environment variable ${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

export function loadConfig(env = process.env) {
  const missing = REQUIRED.filter((name) => env[name] === undefined);
  if (missing.length > 0) {
    throw new ConfigError(`missing required environment variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  }
  const timeoutMs = integer(env, 'BACKEND_TIMEOUT_MS', 1, 600_000);
  const tuning = (name, min, max) => (env[name] === undefined ? TUNING[name] : integer(env, name, min, max));
  return {
    // Protocol hygiene (CONTRACT.md): how long a request head may take from its first byte, and
    // how long a kept-alive connection may stay silent.
    headTimeoutMs: integer(env, 'HEAD_TIMEOUT_MS', 1, 3_600_000),
    optimizeEmptyRequests: tuning('OPTIMIZE_EMPTY_REQUESTS', 0, 1) === 1,
    idleTimeoutMs: integer(env, 'IDLE_TIMEOUT_MS', 1, 3_600_000),
    host: env.HOST,
    port: integer(env, 'PORT', 1, 65535),
    // Not part of the contract: an optional override of one worker per usable core.
    workers: env.WORKERS === undefined ? os.availableParallelism() : integer(env, 'WORKERS', 1, 1024),
    timeoutMs,
    redis: {
      host: env.REDIS_HOST,
      port: integer(env, 'REDIS_PORT', 1, 65535),
      timeoutMs,
      autoPipelining: tuning('REDIS_AUTO_PIPELINING', 0, 1) === 1,
    },
    mysql: {
      host: env.MYSQL_HOST,
      port: integer(env, 'MYSQL_PORT', 1, 65535),
      user: env.MYSQL_USER,
      password: env.MYSQL_PASSWORD,
      database: env.MYSQL_DATABASE,
      timeoutMs,
      poolSize: tuning('MYSQL_POOL_SIZE', 1, 1024),
      queueLimit: MYSQL_QUEUE_LIMIT,
    },
    memcache: {
      host: env.MEMCACHE_HOST,
      port: integer(env, 'MEMCACHE_PORT', 1, 65535),
      timeoutMs,
      connections: tuning('MEMCACHE_CONNECTIONS', 1, 1024),
    },
  };
}
