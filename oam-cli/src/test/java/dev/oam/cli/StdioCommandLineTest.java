package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code oam stdio} started on its own (Main's fast path) is the same command as through the whole command line. */
class StdioCommandLineTest {
    @Test
    void theUsageIsTheSameAsTheSubcommandsOfTheWholeCommandLine() {
        String whole = Main.commandLine().getSubcommands().get("stdio").getUsageMessage();
        String alone = Main.stdioCommandLine().getUsageMessage();

        assertThat(alone)
                .startsWith("Usage: oam stdio ")
                .contains("--max-sessions")
                .isEqualTo(whole);
    }

    @Test
    void aBadFlagIsRefusedWithTheSameExitCodeAndMessage() {
        StringWriter whole = new StringWriter();
        StringWriter alone = new StringWriter();
        CommandLine wholeLine = Main.commandLine();
        wholeLine.setErr(new PrintWriter(whole));
        CommandLine aloneLine = Main.stdioCommandLine();
        aloneLine.setErr(new PrintWriter(alone));

        int wholeCode = wholeLine.execute("stdio", "--max-sessions", "many");
        int aloneCode = aloneLine.execute("--max-sessions", "many");

        assertThat(aloneCode).isEqualTo(wholeCode).isEqualTo(2);
        assertThat(alone.toString()).contains("--max-sessions").isEqualTo(whole.toString());
    }
}
