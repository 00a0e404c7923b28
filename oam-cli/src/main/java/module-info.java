/** The {@code oam} command (picocli) and the stdio transport. */
module dev.oam.cli {
    requires dev.oam.bridge;
    requires dev.oam.server;
    requires info.picocli;
    requires org.jline;
    requires static org.jspecify;

    opens dev.oam.cli to info.picocli;
}
