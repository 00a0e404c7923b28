/** {@code oam serve}: the OpenAI-compatible HTTP server on Jetty 12. */
module dev.oam.server {
    requires transitive dev.oam.core;
    requires org.eclipse.jetty.server;
    requires org.eclipse.jetty.unixdomain.server;
    requires static transitive org.jspecify;

    exports dev.oam.server;
}
