package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oam chat}: piped input, and a real pseudo-terminal through tmux (bin/lib/tmux.sh installs it when missing) for
 * line editing, history, Ctrl-C and Ctrl-D. Every step waits for the screen to show what it expects.
 */
@Tag("system-package")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ChatCommandIT {
    private static final String ECHO = "{\"steps\":[],\"fallback\":{\"template\":\"You said: {prompt}\"}}";
    private static Path tmux;

    @TempDir
    Path dir;

    private final List<String> sessions = new ArrayList<>();

    @BeforeAll
    static void findTmux() throws Exception {
        Path script = Transports.launcher().getParent().resolve("lib/tmux.sh");
        Process p = new ProcessBuilder(
                        "bash", "-c", ". \"$1\" && oam_tmux && command -v tmux", "tmux", script.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor())
                .as("tmux is needed for the terminal tests (bin/lib/tmux.sh)")
                .isZero();
        tmux = Path.of(out);
    }

    @AfterEach
    void killSessions() throws Exception {
        for (String session : sessions) {
            tmux("kill-session", "-t", session);
        }
    }

    private String tmux(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(tmux.toString(), "-L", "oam-chat-it"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        return out;
    }

    /** Starts {@code oam chat} in a new tmux session; its exit status lands in a file. */
    private String start(String script, String... flags) throws Exception {
        return startWith("", script, flags);
    }

    private String startWith(String env, String script, String... flags) throws Exception {
        String session = launch(env, script, "chat " + String.join(" ", flags));
        await(session, "you>"); // capture-pane drops trailing blanks
        return session;
    }

    /** Runs {@code oam ARGS} in a new tmux session (a real terminal); its exit status lands in a file. */
    private String launch(String env, String script, String args) throws Exception {
        String session =
                "chat" + sessions.size() + "-" + ProcessHandle.current().pid();
        sessions.add(session);
        Path status = dir.resolve(session + ".status");
        String command = "env " + env + " OAM_SCRIPT='" + script + "' " + Transports.launcher() + " " + args
                + "; echo $? > " + status + ".tmp; mv " + status + ".tmp " + status + "; sleep 600";
        tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", command);
        return session;
    }

    private String screen(String session) throws Exception {
        return tmux("capture-pane", "-p", "-t", session);
    }

    /** Waits until the screen contains {@code text} (polling; the overall test timeout bounds it). */
    private String await(String session, String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120); // generous: the first run may build bin/oam
        while (true) {
            String screen = screen(session);
            if (screen.contains(text)) {
                return screen;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the terminal never showed '" + text + "'; it shows:\n" + screen);
            }
            Thread.sleep(50);
        }
    }

    private int exitStatus(String session) throws Exception {
        Path status = dir.resolve(session + ".status");
        while (!Files.exists(status)) {
            Thread.sleep(50);
        }
        return Integer.parseInt(Files.readString(status).strip());
    }

    private void keys(String session, String... keys) throws Exception {
        List<String> args = new ArrayList<>(List.of("send-keys", "-t", session));
        args.addAll(List.of(keys));
        tmux(args.toArray(String[]::new));
    }

    @Test
    void editingAndHistoryOnATerminalThenCtrlDLeaves() throws Exception {
        String s = start(ECHO);
        keys(s, "-l", "Hello wrld");
        keys(s, "Left", "Left", "Left");
        keys(s, "-l", "o");
        keys(s, "Enter");
        await(s, "oam> You said: Hello world");
        awaitCount(s, "you>", 2); // the next prompt is up: keys now reach the line editor
        keys(s, "Up"); // the history brings the line back onto the new prompt
        awaitCount(s, "you> Hello world", 2);
        keys(s, "Enter");
        awaitCount(s, "oam> You said: Hello world", 2);
        awaitCount(s, "you>", 3);
        keys(s, "-l", "/usage");
        keys(s, "Enter");
        await(s, "2 turns");
        awaitCount(s, "you>", 4);
        keys(s, "C-d");
        assertThat(exitStatus(s)).isZero();
    }

    private void awaitCount(String session, String text, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (screen(session).split(java.util.regex.Pattern.quote(text), -1).length - 1 < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "the terminal never showed '" + text + "' " + count + " times; it shows:\n" + screen(session));
            }
            Thread.sleep(50);
        }
    }

    @Test
    void ctrlCStopsTheAnswerThenLeavesWith130AtThePrompt() throws Exception {
        String s = start("[{\"text\":\"This answer takes a minute.\",\"delayMs\":60000},{\"text\":\"Quick.\"}]");
        keys(s, "-l", "slow please");
        keys(s, "Enter");
        await(s, "thinking…"); // the turn runs (the spinner is on stderr, the same terminal)
        keys(s, "C-c");
        await(s, "[stopped]");
        await(s, "[stopped]\nyou>");
        keys(s, "-l", "again");
        keys(s, "Enter");
        String screen = await(s, "oam> Quick.");
        assertThat(screen).doesNotContain("takes a minute");
        awaitCount(s, "you>", 3); // back at the prompt: Ctrl-C now means leave
        keys(s, "C-c");
        assertThat(exitStatus(s)).isEqualTo(130);
    }

    @Test
    void colourOnATerminalUnlessNoColorIsSet() throws Exception {
        String failing = "{\"steps\":[],\"fallback\":{\"error\":\"refusal\"}}";
        for (boolean noColor : new boolean[] {false, true}) {
            String s = startWith(noColor ? "NO_COLOR=1" : "", failing);
            keys(s, "-l", "hi");
            keys(s, "Enter");
            await(s, "Try rephrasing your message.");
            awaitCount(s, "you>", 2);
            String escaped = tmux("capture-pane", "-p", "-e", "-t", s);
            if (noColor) {
                assertThat(escaped).doesNotContain("\u001b[31m");
            } else {
                assertThat(escaped).contains("\u001b[31m");
            }
            keys(s, "C-d");
            assertThat(exitStatus(s)).isZero();
        }
    }

    @Test
    void respondAskToolsAsksOnTheTerminalInsteadOfExitingTen() throws Exception {
        String tool =
                "{\"name\":\"lookup\",\"description\":\"Looks up.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}";
        String s = launch(
                "",
                "[{\"toolCalls\":[{\"name\":\"lookup\",\"arguments\":{}}]},{\"template\":\"Looked up: {toolOutput}\"}]",
                "respond --ask-tools --tool-json '" + tool + "' 'look it up'");
        await(s, "output of lookup {} (text, @file, !error)>");
        keys(s, "-l", "!not found");
        keys(s, "Enter");
        await(s, "Looked up: Error: not found");
        assertThat(exitStatus(s)).isZero();
    }

    @Test
    void pipedInputIsEchoedAndSlashCommandsWork() throws Exception {
        String tool =
                "{\"name\":\"lookup\",\"description\":\"Looks up.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}";
        CliRun.Result r = new CliRun(dir)
                .script("[{\"text\":\"Hi.\"},{\"toolCalls\":[{\"name\":\"lookup\",\"arguments\":{}}]},"
                        + "{\"template\":\"The tool said {toolOutput}\"}]")
                .stdin("hello\n/tools\nuse the tool\nforty-two\n/usage\n/bogus\n/save " + dir.resolve("chat.json")
                        + "\n/reset\n/usage\n/exit\n")
                .run("chat", "--tool-json", tool);
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("you> hello\noam> Hi.\n")
                .contains("lookup (external: you type its output)")
                .contains("output of lookup (text, @file, !error)> forty-two")
                .contains("oam> The tool said forty-two")
                .contains("2 turns")
                .contains("Unknown command /bogus; /help lists the commands.")
                .contains("Saved to " + dir.resolve("chat.json"))
                .contains("0 turns");
        assertThat(Files.readString(dir.resolve("chat.json"))).contains("The tool said forty-two");
    }

    @Test
    void aTranscriptWithPendingCallsIsRefused() throws Exception {
        String tool = "{\"name\":\"lookup\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}";
        CliRun.Result pending = new CliRun(dir)
                .script("[{\"toolCalls\":[{\"name\":\"lookup\",\"arguments\":{}}]}]")
                .run("respond", "--tool-json", tool, "look");
        assertThat(pending.exit()).as(pending.toString()).isEqualTo(10);
        String file = pending.json().path("transcript").asText();
        CliRun.Result chat = new CliRun(dir).script("[]").run("chat", "--resume", file);
        assertThat(chat.exit()).isEqualTo(2);
        assertThat(chat.err()).contains("waiting for outputs");
    }
}
