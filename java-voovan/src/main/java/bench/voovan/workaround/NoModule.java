package bench.voovan.workaround;

import org.voovan.http.server.HttpModule;

/**
 * The module listed in conf/web.json ("Modules"). With none listed, Voovan installs its AnnotationModule,
 * which loads every class under com, org, net and io looking for @Router (thousands: Netty's, Lettuce's,
 * the JDK's TLS; about 30 MiB more RSS) and scans again every 30 s (WebContext.initWebServerPluginConfig).
 * This stack has no annotated routes, so its module does nothing.
 */
public final class NoModule extends HttpModule {
    // Workaround: an annotation scan of the whole class path unless a module is listed (README, Workarounds)
    @Override
    public void install() {
    }

    @Override
    public void unInstall() {
    }
}
