package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.Coding;
import dev.oam.core.Log;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.CancellationToken;
import dev.oam.core.agent.Sampling;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code oam respond}: one turn (prompt, tool calls, answer), as text, one JSON object or JSON lines (docs/CLI.md). */
@Command(
        name = "respond",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "One turn: a prompt, any tool calls, the answer.",
            "The prompt is the arguments joined with spaces; piped standard input is appended (or is the prompt).",
            "Exit status: 0 ok, 1 failure, 2 usage or invalid input, 3 model unavailable, 4 guardrail or refusal,",
            "5 context exceeded, 6 rate limited, 10 external tool calls pending (see --resume), 130 interrupted."
        })
final class RespondCommand implements Callable<Integer> {
    @Parameters(paramLabel = "PROMPT", arity = "0..*", description = "The prompt (words are joined with spaces).")
    List<String> words = new ArrayList<>();

    @Option(names = "--no-stdin", description = "Do not read standard input.")
    boolean noStdin;

    @Option(
            names = "--image",
            paramLabel = "PATH",
            description = "Attach an image (not supported by this edition's models: refused).")
    List<Path> images = new ArrayList<>();

    @Option(
            names = {"-i", "--instructions"},
            paramLabel = "TEXT",
            description = "Instructions (system prompt); on --resume the saved ones by default.")
    @Nullable
    String instructions;

    @Option(
            names = "--tools",
            paramLabel = "FILE",
            description =
                    "OpenAI tool definitions (an array or {\"tools\":[...]}); tools with an x-oam block run as commands.")
    List<String> toolFiles = new ArrayList<>();

    @Option(names = "--tool-json", paramLabel = "JSON", description = "One inline tool definition (repeatable).")
    List<String> toolJson = new ArrayList<>();

    @Option(
            names = "--tool-choice",
            paramLabel = "CHOICE",
            description =
                    "auto (default), none, required (or any), explicit, or a tool name; forces the first step only.")
    @Nullable
    String toolChoice;

    @Option(names = "--max-tool-rounds", paramLabel = "N", description = "Tool rounds per turn (default 4).")
    @Nullable
    Integer maxToolRounds;

    @Option(names = "--max-tool-calls", paramLabel = "N", description = "Tool calls per turn (default 12).")
    @Nullable
    Integer maxToolCalls;

    @Option(
            names = "--schema",
            paramLabel = "FILE",
            description = "Answer as JSON that fits this JSON Schema ('-' reads standard input).")
    @Nullable
    String schemaFile;

    @Option(names = "--no-stream", description = "Print the answer at the end instead of as it is written.")
    boolean noStream;

    @Option(
            names = {"-v", "--verbose"},
            description = "Also show model steps, schema warnings and a usage line on standard error.")
    boolean verbose;

    @Option(names = "--json", description = "Print one JSON object with the answer, tool calls, usage and steps.")
    boolean json;

    @Option(
            names = "--events",
            description = "Print JSON lines as the turn runs, ending with completed, tool_calls or error.")
    boolean events;

    @Option(names = "--temperature", paramLabel = "T", description = "Sampling temperature, 0 to 2.")
    @Nullable
    Double temperature;

    @Option(
            names = "--max-tokens",
            paramLabel = "N",
            description = "Longest answer per model step, in tokens (at least 1).")
    @Nullable
    Integer maxTokens;

    @Option(
            names = {"-g", "--greedy"},
            description = "Greedy sampling (deterministic on local models).")
    boolean greedy;

    @Option(
            names = "--resume",
            paramLabel = "FILE",
            description = "Continue a saved conversation, or a turn waiting for tool outputs.")
    @Nullable
    Path resume;

    @Option(
            names = "--tool-output",
            paramLabel = "ID=TEXT",
            description = "Output of a pending call: ID=text, ID=@file or ID=@- (standard input).")
    List<String> toolOutputs = new ArrayList<>();

    @Option(
            names = "--tool-error",
            paramLabel = "ID=TEXT",
            description = "Error output of a pending call (same forms).")
    List<String> toolErrors = new ArrayList<>();

    @Option(
            names = "--ask-tools",
            description = "On a terminal, ask for each external tool's output instead of exiting 10.")
    boolean askTools;

    @Option(
            names = "--save-transcript",
            paramLabel = "FILE",
            description = "Save the conversation after the turn (for --resume).")
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

    private final PrintStream out = Out.stdout();
    private final PrintStream err = Out.stderr();

    @Override
    public Integer call() {
        StdioCommand.noNativeBacktraces();
        List<ModelBackend> backends = new ArrayList<>();
        try {
            return execute(backends);
        } catch (CliError e) {
            report(e);
            return e.exit();
        } finally {
            out.flush();
            backends.forEach(ModelBackend::close);
        }
    }

    private void report(CliError e) {
        if (json || events) {
            if (events) {
                ObjectNode line = Json.object();
                line.put("type", "error");
                line.set("error", e.json().get("error"));
                out.println(Json.write(line));
                out.flush();
            }
            err.println(Json.write(e.json()));
        } else {
            err.println("Error: " + e.getMessage());
        }
    }

    private int execute(List<ModelBackend> backends) throws CliError {
        try {
            Log.setLevel(Log.parseLevel(logLevel));
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage());
        }
        if (json && events) {
            throw CliError.usage("--json and --events cannot be combined");
        }
        checkSampling(temperature, maxTokens, maxToolRounds, maxToolCalls);
        if (!images.isEmpty()) {
            throw CliError.usage("--image: this edition's models take text only (images are not supported)");
        }
        if ((!toolOutputs.isEmpty() || !toolErrors.isEmpty()) && resume == null) {
            throw CliError.usage(
                    "--tool-output and --tool-error answer a pending turn: give the transcript with --resume FILE");
        }
        SavedConversation saved = resume == null ? null : SavedConversation.load(resume);
        boolean pending = saved != null && saved.pending() != null;
        if (!pending && (!toolOutputs.isEmpty() || !toolErrors.isEmpty())) {
            throw CliError.usage(resume + " has no tool calls waiting for outputs");
        }
        String prompt = pending ? String.join(" ", words).strip() : prompt(words, !noStdin);
        if (pending && !prompt.isEmpty()) {
            throw CliError.usage("the resumed turn is waiting for tool outputs ("
                    + ids(saved.pending().calls()) + "); give them with --tool-output/--tool-error, not a new prompt");
        }
        if (!pending && prompt.isEmpty()) {
            throw CliError.usage("no prompt: give it as arguments or on standard input (oam respond --help)");
        }
        CliTools tools = tools(toolFiles, toolJson, saved);
        if (verbose) {
            tools.warnings().forEach(w -> err.println("warning: " + w));
        }
        String instr = instructions != null ? instructions : saved != null ? saved.instructions() : null;
        ToolChoice choice = toolChoice(toolChoice, tools);
        JsonNode schema = schemaFile == null ? null : readSchema(schemaFile, verbose ? err : null);
        if (askTools && !(Tty.isTerminal(0) && Tty.isTerminal(2))) {
            throw CliError.usage("--ask-tools needs a terminal on standard input and standard error");
        }
        backends.addAll(ModelBackend.discover());
        LanguageModel model = model(models, backends, "oam respond");
        AgentOptions options = options(choice, maxToolRounds, maxToolCalls, temperature, maxTokens, greedy);
        Agent agent = new Agent(model, instr, tools.definitions(), options, List.of());
        if (saved != null) {
            agent.setInstructionsEntryId(saved.instructionsEntryId());
        }
        CancellationToken token = CancellationToken.create();
        Tty.Spinner spinner =
                json || events ? Tty.Spinner.start("waiting for the model…") : Tty.Spinner.start("thinking…");
        Display display = new Display(spinner);
        TurnRunner.External external = askTools ? askingHandler(err) : TurnRunner.External.SUSPEND;
        TurnRunner runner = new TurnRunner(agent, tools, display, external, token);
        TurnRunner.Outcome outcome;
        try {
            if (pending) {
                SavedConversation.Pending waiting = saved.pending();
                Map<String, ToolReply> answers = outputs(waiting.calls());
                int start = saved.pendingTurnStart();
                agent.replaceHistory(saved.entries().subList(0, start));
                List<TranscriptEntry> turn = withOutputs(
                        saved.entries().subList(start, saved.entries().size()), waiting.calls(), answers);
                List<ToolRecord> records = new ArrayList<>(waiting.records());
                for (ToolCall call : waiting.calls()) {
                    records.add(new ToolRecord(
                            call,
                            answers.get(call.id()).output(),
                            answers.get(call.id()).isError(),
                            0));
                }
                SavedConversation.Pending before = new SavedConversation.Pending(
                        waiting.calls(),
                        waiting.roundsUsed(),
                        waiting.callsUsed(),
                        waiting.maxToolRounds(),
                        waiting.maxToolCalls(),
                        records,
                        waiting.usage(),
                        waiting.steps());
                JsonNode turnSchema = ((TranscriptEntry.Prompt) turn.get(0)).schema();
                TurnRequest request = TurnRequest.of("")
                        .withSchema(turnSchema)
                        .withToolChoice(toolChoice != null ? choice : ToolChoice.AUTO)
                        .withMaxToolRounds(maxToolRounds != null ? maxToolRounds : waiting.maxToolRounds())
                        .withMaxToolCalls(maxToolCalls != null ? maxToolCalls : waiting.maxToolCalls());
                schema = turnSchema;
                outcome = runner.resume(request, turn, before);
            } else {
                if (saved != null) {
                    agent.replaceHistory(saved.entries());
                }
                outcome = runner.run(TurnRequest.of(prompt).withSchema(schema));
            }
        } catch (AgentException e) {
            spinner.stop();
            display.endLine();
            throw CliError.of(e);
        } finally {
            spinner.stop();
        }
        String modelName = models.modelName();
        switch (outcome) {
            case TurnRunner.Outcome.Suspended s -> {
                display.endLine();
                Path file = saveTranscript != null ? saveTranscript : tempFile();
                List<TranscriptEntry> entries = new ArrayList<>(agent.history());
                entries.addAll(s.turn());
                new SavedConversation(
                                agent.instructionsEntryId(), agent.instructions(), tools.raw(), entries, s.pending())
                        .save(file, tools.definitions(), modelName);
                ObjectNode line = Json.object();
                if (events) {
                    line.put("type", "tool_calls");
                }
                line.put("status", "tool_calls");
                ArrayNode calls = line.putArray("calls");
                s.pending().calls().forEach(call -> calls.add(Coding.call(call)));
                line.put("transcript", file.toAbsolutePath().toString());
                out.println(json ? Out.pretty(line) : Json.write(line));
                return CliError.TOOL_CALLS;
            }
            case TurnRunner.Outcome.Completed c -> {
                TurnResult result = c.result();
                if (saveTranscript != null) {
                    new SavedConversation(
                                    agent.instructionsEntryId(),
                                    agent.instructions(),
                                    tools.raw(),
                                    agent.history(),
                                    null)
                            .save(saveTranscript, tools.definitions(), modelName);
                }
                ObjectNode object = Json.object();
                object.put("status", "completed");
                Coding.turnResult(object, result);
                if (saveTranscript != null) {
                    object.put("transcript", saveTranscript.toAbsolutePath().toString());
                }
                List<String> warnings = new ArrayList<>(tools.warnings());
                warnings.addAll(model.warnings());
                if (!warnings.isEmpty()) {
                    object.set("warnings", Json.strings(warnings));
                }
                if (json) {
                    out.println(Out.pretty(object));
                } else if (events) {
                    object.put("type", "completed");
                    ObjectNode line = Json.object();
                    line.put("type", "completed");
                    object.remove("type");
                    line.setAll(object);
                    out.println(Json.write(line));
                } else {
                    display.finish(result, schema != null);
                }
                return CliError.OK;
            }
        }
    }

    /** Shows the turn as it runs: JSON lines with --events; streamed text and tool lines otherwise. */
    private final class Display implements TurnListener {
        private final Tty.Spinner spinner;
        private final boolean color = Tty.colorOnStderr();
        private final boolean toolLines = verbose || Tty.isTerminal(2);
        private boolean streamed;
        private boolean midLine;

        Display(Tty.Spinner spinner) {
            this.spinner = spinner;
        }

        @Override
        public void onEvent(TurnEvent event) {
            if (!(event instanceof TurnEvent.ModelStep)) {
                spinner.stop();
            }
            if (events) {
                out.println(Json.write(Coding.event(event)));
                out.flush();
                return;
            }
            if (json) {
                return;
            }
            switch (event) {
                case TurnEvent.Text text
                when !noStream && schemaFile == null -> {
                    if (text.isReset()) {
                        if (midLine) {
                            out.println();
                        }
                        out.print(text.text());
                    } else {
                        out.print(text.delta());
                    }
                    out.flush();
                    streamed = true;
                    midLine = !text.text().endsWith("\n") && !text.text().isEmpty();
                }
                case TurnEvent.ToolCallStarted started
                when toolLines ->
                    err.println(Tty.dim(
                            "⚙ " + started.call().name() + " "
                                    + Json.write(started.call().arguments())
                                    + (started.execution().equals("client") ? " (external)" : ""),
                            color));
                case TurnEvent.ToolCallCompleted completed
                when toolLines -> {
                    String text = clip(completed.record().reply().modelText(), 200);
                    err.println(
                            completed.record().isError()
                                    ? Tty.red("  ↳ " + text, color)
                                    : Tty.dim("  ↳ " + text, color));
                }
                case TurnEvent.ModelStep step
                when verbose ->
                    err.println(Tty.dim(
                            "step " + step.step().index() + ": tools "
                                    + step.step().mode().wireName()
                                    + (step.step().enabledTools().isEmpty()
                                            ? ""
                                            : " " + step.step().enabledTools()),
                            color));
                default -> {}
            }
        }

        void endLine() {
            if (midLine) {
                out.println();
                out.flush();
                midLine = false;
            }
        }

        void finish(TurnResult result, boolean structured) {
            if (structured && result.structured() != null) {
                out.println(Out.pretty(result.structured()));
            } else if (!streamed) {
                out.println(result.text());
            } else {
                endLine();
            }
            out.flush();
            if (verbose) {
                err.println(Tty.dim(
                        "usage: " + result.usage().inputTokens() + " input ("
                                + result.usage().cachedInputTokens()
                                + " cached), " + result.usage().outputTokens() + " output, "
                                + result.usage().totalTokens() + " total tokens; "
                                + result.steps().size() + " steps, "
                                + result.toolCalls().size() + " tool calls",
                        color));
            }
        }
    }

    static String clip(String text, int max) {
        String line = text.replace('\n', ' ');
        return line.length() <= max ? line : line.substring(0, max - 1) + "…";
    }

    /** {@code --ask-tools}: asks on the terminal for each external output (text, @file, or !message for an error). */
    static TurnRunner.External askingHandler(PrintStream err) {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        return calls -> {
            Map<String, ToolReply> answers = new HashMap<>();
            for (ToolCall call : calls) {
                err.print("output of " + call.name() + " " + Json.write(call.arguments()) + " (text, @file, !error)> ");
                err.flush();
                String line;
                try {
                    line = in.readLine();
                } catch (IOException e) {
                    line = null;
                }
                if (line == null) {
                    throw dev.oam.core.agent.AgentException.cancelled();
                }
                answers.put(call.id(), typed(line));
            }
            return answers;
        };
    }

    /** A typed tool output: {@code !message} is an error, {@code @file} a file's content, anything else the text. */
    static ToolReply typed(String line) {
        if (line.startsWith("!")) {
            return ToolReply.error(line.substring(1).strip());
        }
        if (line.startsWith("@") && line.length() > 1) {
            try {
                return ToolReply.output(
                        outputValue(Files.readString(Path.of(line.substring(1).strip()))));
            } catch (IOException e) {
                return ToolReply.error("cannot read " + line.substring(1) + ": " + e.getMessage());
            }
        }
        return ToolReply.output(outputValue(line));
    }

    /** Text, or the JSON it holds when it is a JSON object or array. */
    static JsonNode outputValue(String text) {
        String trimmed = text.strip();
        if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
            try {
                JsonNode node = Json.parse(trimmed);
                if (node.isContainerNode()) {
                    return node;
                }
            } catch (IOException e) {
                // plain text
            }
        }
        return TextNode.valueOf(text);
    }

    private Map<String, ToolReply> outputs(List<ToolCall> calls) throws CliError {
        Map<String, ToolReply> answers = new LinkedHashMap<>();
        String stdin = null;
        List<String[]> all = new ArrayList<>();
        toolOutputs.forEach(o -> all.add(new String[] {o, "output"}));
        toolErrors.forEach(o -> all.add(new String[] {o, "error"}));
        for (String[] given : all) {
            String spec = given[0];
            int eq = spec.indexOf('=');
            if (eq <= 0) {
                throw CliError.usage("--tool-" + given[1] + " takes ID=TEXT, ID=@FILE or ID=@-, not '" + spec + "'");
            }
            String id = spec.substring(0, eq);
            String value = spec.substring(eq + 1);
            if (calls.stream().noneMatch(c -> c.id().equals(id))) {
                throw new CliError(
                        "missing_tool_output",
                        CliError.USAGE,
                        "no pending call has the id '" + id + "' (pending: " + ids(calls) + ")");
            }
            if (answers.containsKey(id)) {
                throw new CliError(
                        "missing_tool_output", CliError.USAGE, "the call " + id + " got more than one output");
            }
            if (value.equals("@-")) {
                if (stdin != null) {
                    throw CliError.usage("only one output can come from standard input (@-)");
                }
                try {
                    stdin = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw CliError.io("cannot read standard input: " + e.getMessage());
                }
                value = stdin;
            } else if (value.startsWith("@")) {
                try {
                    value = Files.readString(Path.of(value.substring(1)));
                } catch (IOException | java.nio.file.InvalidPathException e) {
                    throw CliError.io("cannot read the output file " + value.substring(1) + ": " + e.getMessage());
                }
            }
            answers.put(
                    id,
                    given[1].equals("error")
                            ? new ToolReply(TextNode.valueOf(value.strip()), true)
                            : ToolReply.output(outputValue(value)));
        }
        List<String> missing = calls.stream()
                .map(ToolCall::id)
                .filter(id -> !answers.containsKey(id))
                .toList();
        if (!missing.isEmpty()) {
            throw new CliError(
                    "missing_tool_output",
                    CliError.USAGE,
                    "every pending call needs an output; missing: "
                            + String.join(
                                    ", ",
                                    missing.stream()
                                            .map(id -> id + " ("
                                                    + calls.stream()
                                                            .filter(c -> c.id().equals(id))
                                                            .findFirst()
                                                            .map(ToolCall::name)
                                                            .orElse("?")
                                                    + ")")
                                            .toList()));
        }
        return answers;
    }

    /** The pending turn with the supplied outputs added; the last round's outputs in call order. */
    static List<TranscriptEntry> withOutputs(
            List<TranscriptEntry> turn, List<ToolCall> calls, Map<String, ToolReply> answers) {
        List<TranscriptEntry> entries = new ArrayList<>(turn);
        int lastCalls = -1;
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i) instanceof TranscriptEntry.ToolCalls) {
                lastCalls = i;
                break;
            }
        }
        TranscriptEntry.ToolCalls round = (TranscriptEntry.ToolCalls) entries.get(lastCalls);
        List<TranscriptEntry> outputs = new ArrayList<>(entries.subList(lastCalls + 1, entries.size()));
        for (ToolCall call : calls) {
            outputs.add(TranscriptEntry.ToolOutput.of(
                    call.name(), call.id(), answers.get(call.id()).modelText()));
        }
        List<String> order = round.calls().stream().map(ToolCall::id).toList();
        outputs.sort(java.util.Comparator.comparingInt(
                e -> e instanceof TranscriptEntry.ToolOutput o ? order.indexOf(o.callId()) : -1));
        List<TranscriptEntry> result = new ArrayList<>(entries.subList(0, lastCalls + 1));
        result.addAll(outputs);
        return result;
    }

    private static String ids(List<ToolCall> calls) {
        return String.join(
                ", ", calls.stream().map(c -> c.id() + " (" + c.name() + ")").toList());
    }

    private static Path tempFile() throws CliError {
        try {
            return Files.createTempFile("oam-", ".json");
        } catch (IOException e) {
            throw CliError.io("cannot create a temporary file for the transcript: " + e.getMessage());
        }
    }

    // ---- shared with oam chat ----

    static void checkSampling(
            @Nullable Double temperature,
            @Nullable Integer maxTokens,
            @Nullable Integer rounds,
            @Nullable Integer calls)
            throws CliError {
        if (temperature != null && !(temperature >= 0 && temperature <= 2)) {
            throw CliError.usage("--temperature must be between 0 and 2");
        }
        if (maxTokens != null && maxTokens < 1) {
            throw CliError.usage("--max-tokens must be at least 1");
        }
        if (rounds != null && rounds < 0 || calls != null && calls < 0) {
            throw CliError.usage("--max-tool-rounds and --max-tool-calls must be 0 or more");
        }
    }

    static AgentOptions options(
            ToolChoice choice,
            @Nullable Integer rounds,
            @Nullable Integer calls,
            @Nullable Double temperature,
            @Nullable Integer maxTokens,
            boolean greedy) {
        AgentOptions d = AgentOptions.defaults(Duration.ZERO);
        return new AgentOptions(
                choice,
                rounds != null ? rounds : d.maxToolRounds(),
                calls != null ? calls : d.maxToolCalls(),
                null,
                temperature,
                maxTokens,
                greedy ? Sampling.GREEDY : null,
                Duration.ZERO,
                d.trimHistory(),
                d.reservedResponseTokens(),
                d.maxAttempts());
    }

    /** The prompt: the words joined with spaces, then piped standard input (not a terminal) after a blank line. */
    static String prompt(List<String> words, boolean readStdin) throws CliError {
        String text = String.join(" ", words).strip();
        if (readStdin && !Tty.isTerminal(0)) {
            String piped;
            try {
                piped = new String(System.in.readAllBytes(), StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw CliError.io("cannot read standard input: " + e.getMessage());
            }
            if (!piped.isEmpty()) {
                text = text.isEmpty() ? piped : text + "\n\n" + piped;
            }
        }
        return text;
    }

    /** The tools of --tools and --tool-json, or (when neither is given) those saved with a resumed conversation. */
    static CliTools tools(List<String> files, List<String> inline, @Nullable SavedConversation saved) throws CliError {
        if (files.isEmpty() && inline.isEmpty()) {
            return saved == null || saved.rawTools().isEmpty()
                    ? CliTools.NONE
                    : CliTools.parse(saved.rawTools(), Path.of("").toAbsolutePath(), "the saved tools");
        }
        List<CliTools> parts = new ArrayList<>();
        for (String file : files) {
            parts.add(CliTools.readFile(file));
        }
        if (!inline.isEmpty()) {
            parts.add(CliTools.parse(CliTools.readInline(inline), Path.of("").toAbsolutePath(), "--tool-json"));
        }
        return CliTools.merge(parts);
    }

    static ToolChoice toolChoice(@Nullable String value, CliTools tools) throws CliError {
        if (value == null || value.equals("auto")) {
            return ToolChoice.AUTO;
        }
        return switch (value) {
            case "none" -> ToolChoice.NONE;
            case "required", "any" -> {
                if (tools.tools().isEmpty()) {
                    throw CliError.usage("--tool-choice " + value + " needs tools (--tools or --tool-json)");
                }
                yield ToolChoice.REQUIRED;
            }
            case "explicit" -> ToolChoice.EXPLICIT;
            default -> {
                if (tools.find(value) == null) {
                    throw CliError.usage("--tool-choice: there is no tool named '" + value
                            + "' (use auto, none, required, " + "explicit or one of: "
                            + String.join(
                                    ", ",
                                    tools.tools().stream()
                                            .map(CliTools.Tool::name)
                                            .toList()) + ")");
                }
                yield new ToolChoice.Named(value);
            }
        };
    }

    /** Reads and checks a JSON Schema file; exit 2 names the file and the schema path. */
    static JsonNode readSchema(String file, @Nullable PrintStream warnings) throws CliError {
        String text;
        try {
            text = file.equals("-")
                    ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                    : Files.readString(Path.of(file));
        } catch (IOException | java.nio.file.InvalidPathException e) {
            throw CliError.io("cannot read the schema " + file + ": " + e.getMessage());
        }
        JsonNode schema;
        try {
            schema = Json.parse(text);
        } catch (IOException e) {
            throw new CliError("invalid_schema", CliError.USAGE, file + ": not valid JSON: " + e.getMessage());
        }
        try {
            GenerationSchema converted = GenerationSchema.convert(schema, "Response");
            if (warnings != null) {
                converted.warnings().forEach(w -> warnings.println("schema warning: " + w));
            }
        } catch (SchemaException e) {
            throw new CliError(
                    "invalid_schema", CliError.USAGE, file + ": at " + e.schemaPath() + ": " + e.getMessage());
        }
        return schema;
    }

    static LanguageModel model(ModelSource models, List<ModelBackend> backends, String command) throws CliError {
        try {
            return models.resolve(backends, command);
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage());
        }
    }
}
