// Configuration comes from the environment only. The harness passes every variable of
// shared-schema/defaults.env, so nothing is defaulted here: a missing variable is a deployment
// error and is reported by name.
import os from 'node:os';

const REQUIRED = [
  'HOST', 'PORT',
  'REDIS_HOST', 'REDIS_PORT',
  'MYSQL_HOST', 'MYSQL_PORT', 'MYSQL_USER', 'MYSQL_PASSWORD', 'MYSQL_DATABASE',
  'MEMCACHE_HOST', 'MEMCACHE_PORT',
  'BACKEND_TIMEOUT_MS', 'HEAD_TIMEOUT_MS', 'IDLE_TIMEOUT_MS',
];

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
  return {
    // Protocol hygiene (CONTRACT.md): how long a request head may take from its first byte, and
    // how long a kept-alive connection may stay silent.
    headTimeoutMs: integer(env, 'HEAD_TIMEOUT_MS', 1, 3_600_000),
    idleTimeoutMs: integer(env, 'IDLE_TIMEOUT_MS', 1, 3_600_000),
    host: env.HOST,
    port: integer(env, 'PORT', 1, 65535),
    // Not part of the contract: an optional override of one worker per usable core.
    workers: env.WORKERS === undefined ? os.availableParallelism() : integer(env, 'WORKERS', 1, 1024),
    timeoutMs,
    redis: { host: env.REDIS_HOST, port: integer(env, 'REDIS_PORT', 1, 65535), timeoutMs },
    mysql: {
      host: env.MYSQL_HOST,
      port: integer(env, 'MYSQL_PORT', 1, 65535),
      user: env.MYSQL_USER,
      password: env.MYSQL_PASSWORD,
      database: env.MYSQL_DATABASE,
      timeoutMs,
    },
    memcache: { host: env.MEMCACHE_HOST, port: integer(env, 'MEMCACHE_PORT', 1, 65535), timeoutMs },
  };
}
