package dev.oam.cli;

import dev.oam.bridge.BridgeEngine;
import dev.oam.core.Environment;
import dev.oam.core.Log;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code oam} command. */
@Command(
        name = "oam",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "oam for Java: a JSON-RPC 2.0 bridge that lets game engines drive local LLM agents with "
                + "real tool calls.",
        subcommands = {
            StdioCommand.class,
            ServeCommand.class,
            RespondCommand.class,
            ChatCommand.class,
            DemoCommand.class,
            InfoCommands.Available.class,
            InfoCommands.Schema.class,
            InfoCommands.Tools.class,
            InfoCommands.AgentReadme.class,
            ModelCommands.Pull.class,
            ModelCommands.Models.class
        })
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * The process's environment. The CLI's entry point: every command and helper of the CLI reads the host's variables
     * and JVM switches through this one call (a command's {@link ModelSource} keeps it in a field tests replace), and
     * hands typed values or this environment to the bridge and the backends below.
     */
    static Environment process() {
        return Environment.system();
    }

    public static void main(String[] args) {
        Log.toConsole(); // this process is ours: logs are lines on stderr, not the JDK's System.Logger
        int code = args.length > 0 && args[0].equals("stdio")
                ? stdioCommandLine().execute(Arrays.copyOfRange(args, 1, args.length))
                : commandLine().execute(args);
        System.exit(code);
    }

    static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(new java.io.PrintWriter(System.err, true));
        return cli;
    }

    /**
     * {@code oam stdio} on its own. A game spawns it on every launch and waits for its first answer: picocli reads the
     * options of every command it is given when it is built, so the whole command line would read those of all the
     * others first. The same command, flags, help and errors as {@code oam stdio} through {@link #commandLine()}.
     */
    static CommandLine stdioCommandLine() {
        CommandLine cli = new CommandLine(new StdioCommand()).setCommandName("oam stdio");
        cli.setOut(new java.io.PrintWriter(System.err, true));
        return cli;
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"oam " + BridgeEngine.VERSION + " (protocol " + BridgeEngine.PROTOCOL_VERSION + ")"};
        }
    }
}
