package javanetty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * java-netty: the contract on plain Netty 4.2. Knobs that are not configuration (addresses come
 * only from the environment) are JVM system properties that stack.toml's run command sets from
 * environment variables (README, Tuning): -Dtransport=auto|io_uring|epoll|nio,
 * -DeventLoops=N (default: one per core), -Dmysql.pool=N (default: 16), -Dsleep.mistake=block-event-loop
 * (benchmarks only: /sleep blocks its loop, the mistake measured in README's Tuning), and Netty's own
 * -Dio.netty.allocator.type, which ByteBufAllocator.DEFAULT follows.
 */
public final class Main {
    public static void main(String[] args) {
        try {
            run();
        } catch (Throwable t) {
            // Lettuce's and Vert.x's threads are not daemons: without this a failed start would linger.
            System.err.println("java-netty: failed to start: " + t);
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run() throws Exception {
        Config config = Config.fromEnv();
        boolean sleepBlocks = HttpHandler.blocksEventLoop(System.getProperty("sleep.mistake")); // refused first
        Transport transport = Transport.choose(System.getProperty("transport", "auto"));
        int cores = Runtime.getRuntime().availableProcessors();
        int loops = Integer.getInteger("eventLoops", cores);
        // A fixed pool, not one per core: the database's connection limit (MariaDB's max_connections
        // defaults to 151) is shared by every instance, whatever the size of this host (README, Tuning).
        int mysqlPool = Integer.getInteger("mysql.pool", 16);
        ByteBufAllocator alloc = ByteBufAllocator.DEFAULT; // -Dio.netty.allocator.type (stack.toml)

        EventLoopGroup group = new MultiThreadIoEventLoopGroup(loops, transport.factory());
        Map<EventExecutor, Responses> responses = new IdentityHashMap<>();
        for (EventExecutor e : group) {
            responses.put(e, e.submit(() -> new Responses((EventLoop) e)).get());
        }

        Redis redis = new Redis(config, cores);
        Mysql mysql = new Mysql(config, cores, mysqlPool);
        Memcache memcache = new Memcache(config);
        // Each warm-up waits for its backend only while it is reachable: a backend that is down does not
        // stop the start; its endpoint answers 503 until it is back (then 200 within 2 s).
        redis.warm();
        mysql.warm();
        App app = new App(redis, mysql, memcache, config.backendTimeoutMs(), sleepBlocks);

        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 4096)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        pipeline(ch, app, responses.get(ch.eventLoop()), config.headTimeoutMs(), config.idleTimeoutMs());
                    }
                });
        Channel server = bootstrap.bind(config.host(), config.port()).sync().channel();
        System.out.printf("java-netty listening on %s:%d: transport %s, %d event loop(s), mysql pool %d, %s,"
                        + " head timeout %d ms, idle timeout %d ms, /sleep %s, JDK %s%n",
                config.host(), config.port(), transport.name(), loops, mysqlPool,
                alloc.getClass().getSimpleName(), config.headTimeoutMs(), config.idleTimeoutMs(),
                sleepBlocks ? "BLOCKS the event loop (SLEEP_MISTAKE)" : "on Netty's timer", Runtime.version());

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
            memcache.close();
            redis.close();
            mysql.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
        }));
        server.closeFuture().sync();
    }

    /** One connection's pipeline (the unit tests build the same one on an EmbeddedChannel). */
    static void pipeline(Channel ch, App app, Responses responses, int headTimeoutMs, int idleTimeoutMs) {
        RequestDecoder decoder = new RequestDecoder(headTimeoutMs);
        ch.pipeline().addLast(
                // IDLE_TIMEOUT_MS without a byte read: HttpHandler closes on the event
                new IdleStateHandler(idleTimeoutMs, 0, 0, TimeUnit.MILLISECONDS),
                new Responses.Encoder(),
                decoder,
                new HttpHandler(app, responses, decoder));
    }
}
