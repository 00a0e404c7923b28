package dev.oam.cli;

import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolReply;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code oam chat}: an interactive conversation. On a terminal the line editor is JLine (editing keys, history with the
 * arrow keys); piped input is read line by line and echoed. Ctrl-C stops the answer being written (and exits 130 at the
 * prompt); Ctrl-D exits.
 */
@Command(
        name = "chat",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Chat with the model: answers stream as they are written, command tools run, and you type the",
            "outputs of external tools. Slash commands: /tools /reset /save FILE /usage /exit /help.",
            "Ctrl-C stops an answer (exits 130 at the prompt); Ctrl-D exits."
        })
final class ChatCommand implements Callable<Integer> {
    static final String PROMPT = "you> ";
    static final String ANSWER = "oam> ";

    @Option(
            names = {"-i", "--instructions"},
            paramLabel = "TEXT",
            description = "Instructions (system prompt).")
    @Nullable
    String instructions;

    @Option(names = "--tools", paramLabel = "FILE", description = "Tool definitions (x-oam tools run as commands).")
    List<String> toolFiles = new ArrayList<>();

    @Option(names = "--tool-json", paramLabel = "JSON", description = "One inline tool definition (repeatable).")
    List<String> toolJson = new ArrayList<>();

    @Option(
            names = "--tool-choice",
            paramLabel = "CHOICE",
            description = "auto (default), none, required, explicit or a tool name.")
    @Nullable
    String toolChoice;

    @Option(names = "--max-tool-rounds", paramLabel = "N", description = "Tool rounds per turn (default 4).")
    @Nullable
    Integer maxToolRounds;

    @Option(names = "--max-tool-calls", paramLabel = "N", description = "Tool calls per turn (default 12).")
    @Nullable
    Integer maxToolCalls;

    @Option(names = "--temperature", paramLabel = "T", description = "Sampling temperature, 0 to 2.")
    @Nullable
    Double temperature;

    @Option(names = "--max-tokens", paramLabel = "N", description = "Longest answer per model step.")
    @Nullable
    Integer maxTokens;

    @Option(
            names = {"-g", "--greedy"},
            description = "Greedy sampling.")
    boolean greedy;

    @Option(names = "--resume", paramLabel = "FILE", description = "Continue a saved conversation.")
    @Nullable
    Path resume;

    @Option(names = "--save-transcript", paramLabel = "FILE", description = "Save the conversation after every turn.")
    @Nullable
    Path saveTranscript;

    @Option(
            names = "--log-level",
            defaultValue = "warning",
            paramLabel = "LEVEL",
            description = "debug, info, warning (default), error or off.")
    String logLevel;

    @Mixin
    ModelSource models = new ModelSource();

    private PrintWriter out;
    private boolean color;
    private int turns;
    private Usage usage = Usage.ZERO;

    /** Where lines come from: the line editor, or piped input (echoed). */
    private interface Input {
        /** The next line; {@code null} at the end (Ctrl-D). @throws UserInterruptException on Ctrl-C */
        @Nullable
        String read(String prompt);
    }

    @Override
    public Integer call() {
        StdioCommand.noNativeBacktraces();
        List<ModelBackend> backends = new ArrayList<>();
        java.io.PrintStream err = Out.stderr();
        Terminal terminal = null;
        try {
            try {
                Log.setLevel(Log.parseLevel(logLevel));
            } catch (IllegalArgumentException e) {
                throw CliError.usage(e.getMessage());
            }
            TurnArguments.checkSampling(temperature, maxTokens, maxToolRounds, maxToolCalls);
            SavedConversation saved = resume == null ? null : SavedConversation.load(resume);
            if (saved != null && saved.pending() != null) {
                throw CliError.usage(resume
                        + " has tool calls waiting for outputs; finish that turn with oam respond --resume first");
            }
            CliTools tools = TurnArguments.tools(toolFiles, toolJson, saved);
            ToolChoice choice = TurnArguments.toolChoice(toolChoice, tools);
            backends.addAll(ModelBackend.discover());
            LanguageModel model = TurnArguments.model(models, backends, "oam chat");
            String instr = instructions != null ? instructions : saved != null ? saved.instructions() : null;
            Agent agent = new Agent(
                    model,
                    instr,
                    tools.definitions(),
                    TurnArguments.options(choice, maxToolRounds, maxToolCalls, temperature, maxTokens, greedy),
                    List.of());
            if (saved != null) {
                agent.setInstructionsEntryId(saved.instructionsEntryId());
                agent.replaceHistory(saved.entries());
            }
            Input input;
            if (Tty.isTerminal(0) && Tty.isTerminal(1)) {
                terminal = TerminalBuilder.builder().system(true).build();
                LineReader reader = LineReaderBuilder.builder()
                        .terminal(terminal)
                        .appName("oam")
                        .build();
                out = terminal.writer();
                color = !Tty.noColor(models.system);
                input = prompt -> {
                    try {
                        return reader.readLine(prompt);
                    } catch (EndOfFileException e) {
                        return null;
                    }
                };
            } else {
                out = new PrintWriter(Out.stdout(), true);
                BufferedReader lines = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                input = prompt -> {
                    try {
                        String line = lines.readLine();
                        if (line != null) {
                            out.println(prompt + line);
                            out.flush();
                        }
                        return line;
                    } catch (IOException e) {
                        return null;
                    }
                };
            }
            out.println(dim("oam chat: /help lists the commands; Ctrl-D leaves."));
            out.flush();
            return loop(agent, tools, model, input, terminal);
        } catch (CliError e) {
            err.println("Error: " + e.getMessage());
            return e.exit();
        } catch (IOException e) {
            err.println("Error: cannot open the terminal: " + e.getMessage());
            return CliError.FAILURE;
        } finally {
            if (terminal != null) {
                try {
                    terminal.close();
                } catch (IOException e) {
                    // leaving anyway
                }
            }
            backends.forEach(ModelBackend::close);
        }
    }

    private int loop(Agent agent, CliTools tools, LanguageModel model, Input input, @Nullable Terminal terminal)
            throws CliError {
        while (true) {
            String line;
            try {
                line = input.read(PROMPT);
            } catch (UserInterruptException e) {
                out.println();
                out.flush();
                return CliError.INTERRUPTED;
            }
            if (line == null) {
                return CliError.OK;
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("/")) {
                if (!slash(line, agent, tools, model)) {
                    return CliError.OK;
                }
                continue;
            }
            turn(line, agent, tools, input, terminal);
        }
    }

    /** Runs a slash command; {@code false} means leave. */
    private boolean slash(String line, Agent agent, CliTools tools, LanguageModel model) throws CliError {
        String[] parts = line.split("\\s+", 2);
        switch (parts[0]) {
            case "/exit", "/quit", "/q" -> {
                return false;
            }
            case "/help", "/?" -> {
                out.println("/tools         the tools the model may call");
                out.println("/reset         forget the conversation (instructions and tools stay)");
                out.println("/save FILE     save the conversation (oam chat --resume FILE continues it)");
                out.println("/usage         tokens used and turns so far");
                out.println("/exit          leave (also /quit, /q, Ctrl-D)");
                out.println("Ctrl-C stops an answer; at the prompt it leaves with status 130.");
            }
            case "/tools" -> {
                if (tools.tools().isEmpty()) {
                    out.println("No tools.");
                }
                for (CliTools.Tool tool : tools.tools()) {
                    out.println(tool.name() + " ("
                            + (tool.command() != null ? "command" : "external: you type its output") + ")"
                            + (tool.definition().description() == null
                                    ? ""
                                    : ": " + tool.definition().description()));
                }
            }
            case "/reset" -> {
                agent.reset();
                turns = 0;
                usage = Usage.ZERO;
                out.println("The conversation was reset.");
            }
            case "/save" -> {
                if (parts.length < 2 || parts[1].isBlank()) {
                    out.println("Usage: /save FILE");
                } else {
                    Path file = Path.of(parts[1].strip());
                    try {
                        save(agent, tools, file);
                        out.println("Saved to " + file.toAbsolutePath());
                    } catch (CliError e) {
                        out.println("Error: " + e.getMessage());
                    }
                }
            }
            case "/usage" ->
                out.println(usage.inputTokens() + " input tokens (" + usage.cachedInputTokens() + " cached), "
                        + usage.outputTokens() + " output tokens, " + usage.totalTokens() + " total; " + turns + " turn"
                        + (turns == 1 ? "" : "s") + "; context " + model.contextSize() + " tokens");
            default -> out.println("Unknown command " + parts[0] + "; /help lists the commands.");
        }
        out.flush();
        return true;
    }

    private void save(Agent agent, CliTools tools, Path file) throws CliError {
        new SavedConversation(agent.instructionsEntryId(), agent.instructions(), tools.raw(), agent.history(), null)
                .save(file, tools.definitions(), models.modelName());
    }

    private void turn(String prompt, Agent agent, CliTools tools, Input input, @Nullable Terminal terminal)
            throws CliError {
        CancellationToken token = CancellationToken.create();
        Terminal.SignalHandler previous =
                terminal == null ? null : terminal.handle(Terminal.Signal.INT, signal -> token.cancel());
        Tty.Spinner spinner = Tty.Spinner.start("thinking…");
        boolean[] midLine = {false};
        boolean[] needPrefix = {true};
        TurnListener display = event -> {
            if (!(event instanceof TurnEvent.ModelStep)) {
                spinner.stop();
            }
            switch (event) {
                case TurnEvent.Text text -> {
                    if (needPrefix[0]) {
                        out.print(ANSWER);
                        needPrefix[0] = false;
                    }
                    if (text.isReset()) {
                        out.println();
                        out.print(ANSWER + text.text());
                    } else {
                        out.print(text.delta());
                    }
                    midLine[0] = true;
                }
                case TurnEvent.ToolCallStarted started -> {
                    if (midLine[0]) {
                        out.println();
                        midLine[0] = false;
                    }
                    out.println(dim("⚙ " + started.call().name() + " "
                            + Json.write(started.call().arguments())
                            + (started.execution().equals("client") ? " (external)" : "")));
                }
                case TurnEvent.ToolCallCompleted completed -> {
                    String text =
                            "  ↳ " + TurnDisplay.clip(completed.record().reply().modelText(), 110);
                    out.println(completed.record().isError() ? red(text) : dim(text));
                    needPrefix[0] = true;
                }
                default -> {}
            }
            out.flush();
        };
        TurnRunner.External ask = calls -> {
            Map<String, ToolReply> answers = new HashMap<>();
            for (ToolCall call : calls) {
                String line;
                try {
                    line = input.read("output of " + call.name() + " (text, @file, !error)> ");
                } catch (UserInterruptException e) {
                    line = null;
                }
                if (line == null) {
                    throw AgentException.cancelled();
                }
                answers.put(call.id(), ToolOutputs.typed(line));
            }
            return answers;
        };
        try {
            TurnRunner.Outcome outcome = new TurnRunner(agent, tools, display, ask, token).run(TurnRequest.of(prompt));
            spinner.stop();
            if (outcome instanceof TurnRunner.Outcome.Completed completed) {
                TurnResult result = completed.result();
                if (!midLine[0]) {
                    out.print((needPrefix[0] ? ANSWER : "") + result.text());
                }
                out.println();
                turns++;
                usage = usage.plus(result.usage());
                if (saveTranscript != null) {
                    save(agent, tools, saveTranscript);
                }
            }
        } catch (AgentException e) {
            spinner.stop();
            out.println();
            if (e.code() == ErrorCode.CANCELLED) {
                out.println(dim("[stopped]"));
            } else {
                usage = usage.plus(e.usage());
                out.println(red("Error: " + e.getMessage()));
                int exit = CliError.exitFor(e.code());
                if (exit == CliError.REFUSED) {
                    out.println(dim("Try rephrasing your message."));
                } else if (exit == CliError.CONTEXT) {
                    out.println(dim("The conversation no longer fits: /save FILE keeps it, /reset starts over."));
                }
            }
        } finally {
            spinner.stop();
            if (terminal != null) {
                terminal.handle(Terminal.Signal.INT, previous);
            }
            out.flush();
        }
    }

    private String dim(String text) {
        return Tty.dim(text, color);
    }

    private String red(String text) {
        return Tty.red(text, color);
    }
}
