package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ScriptedModel;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code oam demo}: tours of the game layer. */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = "Tours of the game layer.",
        subcommands = {DemoCommand.Tavern.class})
final class DemoCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.err);
    }

    /**
     * {@code oam demo tavern}: Mira, innkeeper of the Sleeping Stag, with a world, two engine tools, memory and a
     * decision at closing time, all through the bridge's own methods (in-process, as a game would use them).
     */
    @Command(
            name = "tavern",
            mixinStandardHelpOptions = true,
            description = {
                "Talk to Mira the innkeeper: an NPC with a world, a menu (check_menu, take_order), a relationship",
                "and a decision at closing time. With --auto (or no terminal) three canned lines are played; without a",
                "configured model the demo brings its own scripted one."
            })
    static final class Tavern implements Callable<Integer> {
        static final List<String> CANNED = List.of(
                "Evening! What's on the menu tonight?",
                "I'll have the rabbit stew, please.",
                "Thanks, Mira. Good night!");

        @Option(names = "--auto", description = "Play the canned lines instead of asking.")
        boolean auto;

        @Option(
                names = "--line",
                paramLabel = "TEXT",
                description = "A line to say (repeatable; replaces the canned lines).")
        List<String> lines = new ArrayList<>();

        @Option(
                names = "--max-turns",
                defaultValue = "6",
                paramLabel = "N",
                description = "Longest conversation (default 6).")
        int maxTurns;

        @Mixin
        ModelSource models = new ModelSource();

        private final PrintStream out = Out.stdout();
        private final boolean color = Tty.colorOnStderr() && Tty.isTerminal(1);
        final Map<String, int[]> menu = new LinkedHashMap<>(); // item -> {price, stock}
        private Rpc rpc;

        @Override
        public Integer call() throws Exception {
            StdioCommand.noNativeBacktraces();
            if (maxTurns < 1) {
                System.err.println("Error: --max-turns must be at least 1");
                return CliError.USAGE;
            }
            List<ModelBackend> backends = ModelBackend.discover();
            LanguageModel model;
            boolean scripted = false;
            try {
                if (ownScript(models.environment())) {
                    model = ScriptedModel.fromJson(
                            Json.parse(new String(
                                    DemoCommand.class
                                            .getResourceAsStream("tavern-script.json")
                                            .readAllBytes(),
                                    StandardCharsets.UTF_8)),
                            "tavern-script");
                    scripted = true;
                } else {
                    model = models.resolve(backends, "oam demo tavern");
                }
            } catch (IllegalArgumentException e) {
                System.err.println("Error: " + e.getMessage());
                backends.forEach(ModelBackend::close); // no engine was made to own them
                return CliError.USAGE;
            }
            menu.put("ale", new int[] {2, 20});
            menu.put("mulled wine", new int[] {4, 6});
            menu.put("rabbit stew", new int[] {5, 3});
            menu.put("honey bread", new int[] {1, 8});
            menu.put("room for the night", new int[] {12, 2});
            long started = System.nanoTime();
            BridgeConfiguration configuration = BridgeConfiguration.builder()
                    .systemModel(model)
                    .backends(backends)
                    .defaultToolTimeout(Duration.ofSeconds(60))
                    .build();
            rpc = new Rpc(configuration, this::toolCall);
            try {
                return tour(scripted ? null : models.modelName(), started);
            } catch (Rpc.RpcError e) {
                System.err.println("Error: " + e.getMessage());
                return CliError.FAILURE;
            } finally {
                rpc.close(); // the engine closes the backends it was given
            }
        }

        /**
         * Whether the demo plays its own script: only when there is no system model as every command finds one
         * ({@code OAM_SCRIPT}, {@code --model}, {@code OAM_MODEL}, or the default model when the model cache holds it).
         */
        static boolean ownScript(dev.oam.core.Environment environment) {
            String script = environment.variable(ModelSource.SCRIPT_VARIABLE);
            return (script == null || script.isBlank())
                    && dev.oam.core.model.ModelSpec.fromEnvironment(environment) == null;
        }

        @SuppressWarnings("try") // the spinner turns only while its scope runs
        private int tour(@Nullable String modelName, long started) throws Exception {
            out.println(bold("The Sleeping Stag") + " — late evening, cold rain."
                    + dim(
                            modelName == null
                                    ? " (the demo's own scripted model: no system model is configured or cached; `oam pull "
                                            + dev.oam.core.model.pull.ModelCache.DEFAULT_MODEL + "` for a real one)"
                                    : " (model: " + modelName + ")"));
            ObjectNode world = Json.object();
            world.put("world", "tavern");
            ObjectNode state = world.putObject("state");
            ObjectNode player = state.putObject("player");
            player.put("name", "Traveler");
            player.put("gold", 30);
            ObjectNode tavern = state.putObject("tavern");
            tavern.put("name", "The Sleeping Stag");
            tavern.put("time_of_day", "late evening");
            tavern.put("weather", "cold rain");
            rpc.call("world/create", world);
            rpc.call("npc/create", npcParams());
            try (Tty.Spinner spinner = Tty.Spinner.start("Mira looks up…")) {
                ObjectNode bark = Json.object();
                bark.put("npc", "mira");
                bark.put("situation", "A rain-soaked traveler comes in from the cold.");
                JsonNode result = rpc.call("npc/bark", bark);
                spinner.stop();
                out.println("Mira: " + result.path("line").asText());
            } catch (Rpc.RpcError e) {
                // a bark is decoration: skipped silently
            }
            List<String> script = !lines.isEmpty() ? lines : auto || !Tty.isTerminal(0) ? CANNED : null;
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            List<String> suggestions = List.of();
            int turns = 0;
            int toolCalls = 0;
            int tokens = 0;
            int relationship = 0;
            for (int turn = 0; turn < maxTurns; turn++) {
                String line;
                if (script != null) {
                    if (turn >= script.size()) {
                        break;
                    }
                    line = script.get(turn);
                    out.println("> " + line);
                } else {
                    out.print("> ");
                    out.flush();
                    line = in.readLine();
                    if (line == null) {
                        break;
                    }
                    line = line.strip();
                    if (line.matches("\\d+")
                            && Integer.parseInt(line) >= 1
                            && Integer.parseInt(line) <= suggestions.size()) {
                        line = suggestions.get(Integer.parseInt(line) - 1);
                        out.println("  (" + line + ")");
                    }
                    if (line.isEmpty() || List.of("q", "quit", "exit", "bye").contains(line.toLowerCase(Locale.ROOT))) {
                        break;
                    }
                }
                JsonNode gold0 = rpc.call("world/get", worldPath("player.gold")).path("value");
                ObjectNode talk = Json.object();
                talk.put("npc", "mira");
                talk.put("line", line);
                talk.put("stream", true);
                long t0 = System.nanoTime();
                boolean[] speaking = {false};
                rpc.onEvent = event -> {
                    switch (event.path("type").asText()) {
                        case "toolCallStarted" -> {
                            endSpeech(speaking);
                            out.println(
                                    dim("  ⚙ " + event.path("call").path("name").asText() + " "
                                            + Json.write(event.path("call").path("arguments"))));
                        }
                        case "toolCallCompleted" -> {
                            String text = "    ↳ "
                                    + TurnDisplay.clip(
                                            Json.text(event.path("record").path("output")), 110);
                            out.println(event.path("record").path("isError").asBoolean() ? red(text) : dim(text));
                        }
                        case "lineDelta" -> {
                            if (!speaking[0]) {
                                out.print("Mira: ");
                                speaking[0] = true;
                            }
                            out.print(event.path("delta").asText());
                        }
                        default -> {}
                    }
                    out.flush();
                };
                JsonNode reply;
                try (Tty.Spinner spinner = Tty.Spinner.start("Mira thinks…")) {
                    rpc.spinner = spinner;
                    reply = rpc.call("npc/talk", talk);
                } finally {
                    rpc.onEvent = event -> {};
                    rpc.spinner = null;
                }
                if (!speaking[0]) {
                    out.print("Mira: " + reply.path("line").asText());
                }
                out.println();
                turns++;
                toolCalls += reply.path("toolCalls").size();
                tokens += reply.path("usage").path("totalTokens").asInt();
                String latency = String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - t0) / 1e9);
                out.println(dim("  [" + reply.path("emotion").asText() + ", " + latency
                        + (reply.path("isFallback").asBoolean() ? ", fallback line" : "") + "]"));
                JsonNode gold1 = rpc.call("world/get", worldPath("player.gold")).path("value");
                if (!gold1.equals(gold0)) {
                    out.println(dim("  gold: " + gold0.asText() + " → " + gold1.asText()));
                }
                int now = reply.path("relationship").asInt();
                if (now != relationship) {
                    out.println(dim("  Mira's feelings: " + (now > relationship ? "+" : "") + (now - relationship)
                            + " (" + attitude(now) + ", " + now + ")"));
                    relationship = now;
                }
                suggestions = new ArrayList<>();
                for (JsonNode option : reply.path("playerOptions")) {
                    suggestions.add(option.asText());
                }
                if (script == null) {
                    for (int i = 0; i < suggestions.size(); i++) {
                        out.println(dim("  " + (i + 1) + ". " + suggestions.get(i)));
                    }
                }
                if (reply.path("endsConversation").asBoolean() && farewell(line)) {
                    break;
                }
            }
            ObjectNode decide = Json.object();
            decide.put("situation", "Closing time. The traveler asks for a room for the night.");
            decide.put("actor", "mira");
            ArrayNode options = decide.putArray("options");
            for (String[] o : new String[][] {
                {"free_room", "Give the room for free"},
                {"room_on_credit", "Let them pay tomorrow"},
                {"full_price", "Ask the full 12 gold"},
                {"turn_away", "Say there is no room"}
            }) {
                ObjectNode option = options.addObject();
                option.put("id", o[0]);
                option.put("description", o[1]);
            }
            ObjectNode context = decide.putObject("context");
            context.set(
                    "traveler_gold",
                    rpc.call("world/get", worldPath("player.gold")).path("value"));
            context.put("mira_feelings", attitude(relationship) + " (" + relationship + " of 100)");
            context.put("rooms_free", 2);
            decide.put("fallbackOptionID", "full_price");
            decide.put("temperature", 0.3);
            String decision;
            try (Tty.Spinner spinner = Tty.Spinner.start("closing time…")) {
                JsonNode result = rpc.call("decision/decide", decide);
                tokens += result.path("usage").path("totalTokens").asInt();
                decision = result.path("optionID").asText() + ": "
                        + result.path("reasoning").asText()
                        + (result.path("isFallback").asBoolean() ? " (fallback)" : "");
            } catch (Rpc.RpcError e) {
                decision = "full_price (fallback: " + e.getMessage() + ")";
            }
            out.println("Closing time. Mira decides: " + decision);
            out.println(dim(String.format(
                    Locale.ROOT,
                    "%d turns, %d tool calls, %d tokens, %.1f s",
                    turns,
                    toolCalls,
                    tokens,
                    (System.nanoTime() - started) / 1e9)));
            out.flush();
            return CliError.OK;
        }

        private void endSpeech(boolean[] speaking) {
            if (speaking[0]) {
                out.println();
                speaking[0] = false;
            }
        }

        static boolean farewell(String line) {
            String lower = line.toLowerCase(Locale.ROOT);
            for (String word : List.of("bye", "goodbye", "good night", "farewell", "see you", "leave", "leaving")) {
                if (lower.contains(word)) {
                    return true;
                }
            }
            return false;
        }

        static String attitude(int relationship) {
            if (relationship >= 50) {
                return "fond";
            } else if (relationship >= 15) {
                return "friendly";
            } else if (relationship > -15) {
                return "neutral";
            } else if (relationship > -50) {
                return "wary";
            }
            return "hostile";
        }

        private static ObjectNode worldPath(String path) {
            ObjectNode node = Json.object();
            node.put("world", "tavern");
            node.put("path", path);
            return node;
        }

        /**
         * Mira as tavern-npc.json describes her, with the menu's items as the enum of her tools' {@code item}: the
         * grammar then lets a model name only what the inn serves (a small model left free writes identifiers such as
         * {@code takes_order_to_take_order_to_buy_something}), and {@code check_menu} may also ask for the whole menu.
         */
        ObjectNode npcParams() throws IOException {
            ObjectNode params = (ObjectNode) Json.parse(new String(
                    DemoCommand.class.getResourceAsStream("tavern-npc.json").readAllBytes(), StandardCharsets.UTF_8));
            for (JsonNode tool : params.path("tools")) {
                ObjectNode item =
                        (ObjectNode) tool.path("parameters").path("properties").path("item");
                ArrayNode items = item.putArray("enum");
                if (tool.path("name").asText().equals("check_menu")) {
                    items.add("");
                }
                menu.keySet().forEach(items::add);
            }
            return params;
        }

        /** The engine side of Mira's tools: the menu lives here; gold lives in the world. */
        private JsonNode toolCall(JsonNode call) throws Rpc.RpcError {
            String name = call.path("name").asText();
            String item = call.path("arguments").path("item").asText("").strip().toLowerCase(Locale.ROOT);
            String match = null;
            for (String candidate : menu.keySet()) {
                if (!item.isEmpty() && (candidate.contains(item) || item.contains(candidate))) {
                    match = candidate;
                    break;
                }
            }
            String listing = String.join(
                    ", ",
                    menu.entrySet().stream()
                            .map(e -> e.getKey() + " " + e.getValue()[0] + " gold (" + e.getValue()[1] + " left)")
                            .toList());
            ObjectNode result = Json.object();
            if (name.equals("check_menu")) {
                if (item.isEmpty()) {
                    result.put("output", "Menu: " + listing);
                } else if (match == null) {
                    return error("No '" + item + "' here. Menu: " + listing);
                } else {
                    ObjectNode output = result.putObject("output");
                    output.put("item", match);
                    output.put("price", menu.get(match)[0]);
                    output.put("stock", menu.get(match)[1]);
                }
                return result;
            }
            if (name.equals("take_order")) {
                if (match == null) {
                    return error("'" + item + "' is not on the menu. Menu: " + listing);
                }
                int[] entry = menu.get(match);
                if (entry[1] <= 0) {
                    return error(match + " is sold out.");
                }
                entry[1]--;
                int gold = rpc.call("world/get", worldPath("player.gold"))
                        .path("value")
                        .asInt();
                if (gold < entry[0]) {
                    entry[1]++;
                    return error("The traveler has only " + gold + " gold; " + match + " costs " + entry[0] + ".");
                }
                ObjectNode set = worldPath("player.gold");
                set.put("value", gold - entry[0]);
                rpc.call("world/set", set);
                ObjectNode output = result.putObject("output");
                output.put("item", match);
                output.put("paid", entry[0]);
                output.put("goldLeft", gold - entry[0]);
                return result;
            }
            return error("unknown tool " + name);
        }

        private static JsonNode error(String message) {
            ObjectNode result = Json.object();
            result.put("output", message);
            result.put("isError", true);
            return result;
        }

        private String dim(String text) {
            return Tty.dim(text, color);
        }

        private String red(String text) {
            return Tty.red(text, color);
        }

        private String bold(String text) {
            return color ? "\u001b[1m" + text + "\u001b[0m" : text;
        }
    }

    /**
     * A JSON-RPC client of an in-process engine: requests block for their response; tool calls are answered on virtual
     * threads.
     */
    static final class Rpc implements AutoCloseable {
        interface ToolHandler {
            JsonNode answer(JsonNode call) throws RpcError;
        }

        static final class RpcError extends Exception {
            RpcError(String message) {
                super(message);
            }
        }

        private final BridgeEngine engine;
        private final Map<String, CompletableFuture<JsonNode>> waiting = new ConcurrentHashMap<>();
        private final AtomicInteger ids = new AtomicInteger();
        private final ToolHandler tools;
        volatile Consumer<JsonNode> onEvent = event -> {};
        volatile Tty.@Nullable Spinner spinner;

        Rpc(BridgeConfiguration configuration, ToolHandler tools) {
            this.tools = tools;
            this.engine = BridgeEngine.withSink(configuration, this::receive);
        }

        private void receive(String line) throws IOException {
            JsonNode message = Json.parse(line);
            if (message.has("method") && message.has("id")) {
                if (message.path("method").asText().equals("tool/call")) {
                    Thread.ofVirtual().start(() -> answerTool(message));
                }
                return;
            }
            if (message.has("method")) {
                if (message.path("method").asText().equals("npc/event")) {
                    JsonNode event = message.path("params").path("event");
                    if (!event.path("type").asText().equals("emotion")) {
                        Tty.Spinner s = spinner;
                        if (s != null) {
                            s.stop();
                        }
                    }
                    onEvent.accept(event);
                }
                return;
            }
            CompletableFuture<JsonNode> future =
                    waiting.remove(message.path("id").asText());
            if (future != null) {
                future.complete(message);
            }
        }

        private void answerTool(JsonNode request) {
            ObjectNode response = Json.object();
            response.put("jsonrpc", "2.0");
            response.set("id", request.get("id"));
            try {
                response.set("result", tools.answer(request.path("params").path("call")));
            } catch (RpcError | RuntimeException e) {
                ObjectNode result = response.putObject("result");
                result.put("output", "The tool failed: " + e.getMessage());
                result.put("isError", true);
            }
            engine.receive(Json.write(response));
        }

        JsonNode call(String method, ObjectNode params) throws RpcError {
            String id = "d-" + ids.incrementAndGet();
            CompletableFuture<JsonNode> future = new CompletableFuture<>();
            waiting.put(id, future);
            ObjectNode request = Json.object();
            request.put("jsonrpc", "2.0");
            request.put("id", id);
            request.put("method", method);
            request.set("params", params);
            engine.receive(Json.write(request));
            JsonNode response = future.join();
            if (response.has("error")) {
                throw new RpcError(
                        method + ": " + response.path("error").path("message").asText());
            }
            return response.get("result");
        }

        @Override
        public void close() {
            engine.close();
        }
    }
}
