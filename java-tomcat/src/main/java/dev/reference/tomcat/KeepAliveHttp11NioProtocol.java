package dev.reference.tomcat;

import org.apache.catalina.util.ServerInfo;
import org.apache.coyote.Processor;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.coyote.http11.KeepAliveHttp11Processor;

/**
 * Tomcat's NIO HTTP/1.1 connector, with processors that keep the connection open after an
 * application's 400, 500 or 503 (see {@link KeepAliveHttp11Processor}). Everything else, including
 * every connector setting in application.properties and the virtual-thread executor, is Tomcat's.
 */
public class KeepAliveHttp11NioProtocol extends Http11NioProtocol {

    /** The Tomcat release the processor was copied from; any other one must not run with it. */
    static final String TOMCAT = "Apache Tomcat/11.0.27";

    public KeepAliveHttp11NioProtocol() {
        if (!TOMCAT.equals(ServerInfo.getServerInfo())) {
            throw new IllegalStateException("KeepAliveHttp11Processor is a copy of " + TOMCAT + "'s Http11Processor "
                    + "but this is " + ServerInfo.getServerInfo() + ": copy the new release's class again");
        }
    }

    @Override
    protected Processor createProcessor() {
        return new KeepAliveHttp11Processor(this, getAdapter());
    }
}
