/** Benchmarks (not tests): throughput, latency and the llama engine, run by {@code bench/run}. */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.oam.bench {
    requires dev.oam.bridge;
    requires dev.oam.model.llama;
    requires dev.oam.testing;
    requires java.management;
    requires jdk.management;
    requires java.net.http;
    requires llama;
    requires org.eclipse.jetty.server;
    requires static org.jspecify;
}
