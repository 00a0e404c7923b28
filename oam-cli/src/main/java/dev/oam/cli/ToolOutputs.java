package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Outputs of external tool calls given by the user: typed on the terminal ({@code --ask-tools}) or on the command line
 * of a resumed turn ({@code --tool-output}, {@code --tool-error}), and put into the pending turn.
 */
final class ToolOutputs {
    private ToolOutputs() {}

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
                    throw dev.oam.core.model.AgentException.cancelled();
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

    /**
     * The outputs of {@code --tool-output} and {@code --tool-error} ({@code ID=TEXT}, {@code ID=@FILE} or
     * {@code ID=@-}) for the pending {@code calls}: every call needs exactly one.
     */
    static Map<String, ToolReply> outputs(List<String> toolOutputs, List<String> toolErrors, List<ToolCall> calls)
            throws CliError {
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

    /** The calls as {@code ID (NAME)}, comma-separated. */
    static String ids(List<ToolCall> calls) {
        return String.join(
                ", ", calls.stream().map(c -> c.id() + " (" + c.name() + ")").toList());
    }
}
