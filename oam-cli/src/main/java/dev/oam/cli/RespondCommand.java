package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.Coding;
import dev.oam.core.Log;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
            description = "OpenAI tool definitions (an array or {\"tools\":[...]}); tools with an x-oam block run "
                    + "as commands.")
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
        TurnArguments.checkSampling(temperature, maxTokens, maxToolRounds, maxToolCalls);
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
        String prompt = pending ? String.join(" ", words).strip() : TurnArguments.prompt(words, !noStdin);
        if (pending && !prompt.isEmpty()) {
            throw CliError.usage("the resumed turn is waiting for tool outputs ("
                    + ToolOutputs.ids(saved.pending().calls())
                    + "); give them with --tool-output/--tool-error, not a new prompt");
        }
        if (!pending && prompt.isEmpty()) {
            throw CliError.usage("no prompt: give it as arguments or on standard input (oam respond --help)");
        }
        CliTools tools = TurnArguments.tools(toolFiles, toolJson, saved);
        if (verbose) {
            tools.warnings().forEach(w -> err.println("warning: " + w));
        }
        String instr = instructions != null ? instructions : saved != null ? saved.instructions() : null;
        ToolChoice choice = TurnArguments.toolChoice(toolChoice, tools);
        JsonNode schema = schemaFile == null ? null : TurnArguments.readSchema(schemaFile, verbose ? err : null);
        if (askTools && !(Tty.isTerminal(0) && Tty.isTerminal(2))) {
            throw CliError.usage("--ask-tools needs a terminal on standard input and standard error");
        }
        backends.addAll(ModelBackend.discover());
        LanguageModel model = TurnArguments.model(models, backends, "oam respond");
        AgentOptions options =
                TurnArguments.options(choice, maxToolRounds, maxToolCalls, temperature, maxTokens, greedy);
        Agent agent = new Agent(model, instr, tools.definitions(), options, List.of());
        if (saved != null) {
            agent.setInstructionsEntryId(saved.instructionsEntryId());
        }
        CancellationToken token = CancellationToken.create();
        Tty.Spinner spinner =
                json || events ? Tty.Spinner.start("waiting for the model…") : Tty.Spinner.start("thinking…");
        TurnDisplay display =
                new TurnDisplay(spinner, out, err, events, json, verbose, !noStream && schemaFile == null);
        TurnRunner.External external = askTools ? ToolOutputs.askingHandler(err) : TurnRunner.External.SUSPEND;
        TurnRunner runner = new TurnRunner(agent, tools, display, external, token);
        TurnRunner.Outcome outcome;
        try {
            if (pending) {
                SavedConversation.Pending waiting = saved.pending();
                Map<String, ToolReply> answers = ToolOutputs.outputs(toolOutputs, toolErrors, waiting.calls());
                int start = saved.pendingTurnStart();
                agent.replaceHistory(saved.entries().subList(0, start));
                List<TranscriptEntry> turn = ToolOutputs.withOutputs(
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

    private static Path tempFile() throws CliError {
        try {
            return Files.createTempFile("oam-", ".json");
        } catch (IOException e) {
            throw CliError.io("cannot create a temporary file for the transcript: " + e.getMessage());
        }
    }
}
