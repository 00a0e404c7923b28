/** The {@code oam} command (picocli) and the stdio transport. */
@SuppressWarnings("requires-automatic") // org.jline has no module descriptor: its automatic name is its own
module dev.oam.cli {
    requires dev.oam.bridge;
    requires dev.oam.server;
    requires info.picocli;
    requires org.jline;
    requires static org.jspecify;

    opens dev.oam.cli to
            info.picocli;
}
