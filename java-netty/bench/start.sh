#!/bin/bash
# usage: [FLAGS=...] [EXTRA=...] start.sh <name> <port>  -> java-netty pinned to CPU 0; pid in /tmp/jn/<name>.pid
name=${1:-server}; port=${2:-18002}
cd "$(dirname "$0")/.."
set -a; source ../shared-schema/defaults.env; set +a
export PORT=$port REDIS_PORT=16401 MYSQL_PORT=13401 MEMCACHE_PORT=21401
: "${JAVA_HOME:?set JAVA_HOME to a JDK 21 or newer}"
export PATH=$JAVA_HOME/bin:$PATH
FLAGS=${FLAGS:-"-XX:+UseSerialGC -Xms128m -Xmx128m -XX:MaxDirectMemorySize=128m -XX:+UseCompactObjectHeaders -Xss512k -XX:+PerfDisableSharedMem"}
ulimit -n $(ulimit -Hn)
nohup setsid taskset -c 0 java $FLAGS $EXTRA --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
  --add-opens java.base/java.nio=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true \
  -cp 'target/java-netty.jar:target/lib/*' javanetty.Main > /tmp/jn/$name.log 2>&1 &
echo $! > /tmp/jn/$name.pid
for i in $(seq 1 450); do curl -sf http://127.0.0.1:$port/hello >/dev/null && break; sleep 0.2; done
grep -q listening /tmp/jn/$name.log || { echo "$name: FAILED to start"; exit 1; }
echo "$name: $(grep listening /tmp/jn/$name.log) flags: $FLAGS $EXTRA"
