package dev.oam.testing.inprocess;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.Coding;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.OperationQueue;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The extension pattern (docs/ARCHITECTURE.md, "Adding methods") end to end: a quest narrator with its own methods, a
 * per-quest queue, streamed {@code quest/event}s and client tools from the same turn driver as sessions, a commit
 * point, and a custom error code.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QuestExtensionTest {
    /** Quests: one agent and one queue each. */
    static final class QuestMethods implements BridgeExtension {
        record Quest(Agent agent, OperationQueue queue) {}

        private final Map<String, Quest> quests = new ConcurrentHashMap<>();

        @Override
        public void register(MethodRegistry.Builder registry, ExtensionContext bridge) {
            registry.register("quest/create", request -> {
                String id = request.params().string("quest");
                JsonNode toolsNode = request.params().get("tools");
                var tools = toolsNode == null
                        ? List.<dev.oam.core.tool.ToolDefinition>of()
                        : ToolDefinitions.parse(toolsNode, "tools").tools();
                var model = request.context().makeModel(request.params().get("model"), "model");
                quests.put(
                        id,
                        new Quest(
                                new Agent(
                                        model,
                                        request.params().optionalString("instructions"),
                                        tools,
                                        AgentOptions.defaults(),
                                        List.of()),
                                new OperationQueue("quest-" + id)));
                return Reply.result(Json.object().put("quest", id));
            });
            registry.register("quest/narrate", request -> {
                String id = request.params().string("quest");
                Quest quest = quests.get(id);
                if (quest == null) {
                    ObjectNode data = Json.object().put("quest", id);
                    throw new BridgeException(-32090, "quest_not_found", "No quest '" + id + "'.", data);
                }
                String text = request.params().string("text");
                boolean stream = request.params().bool("stream", false);
                ObjectNode context = Json.object().put("quest", id);
                quest.queue().submit(request, operation -> {
                    TurnResult result = quest.agent()
                            .respond(
                                    TurnRequest.of(text).withToolChoice(ToolChoice.REQUIRED),
                                    new TurnContext(
                                            operation.token(),
                                            stream
                                                    ? request.events(context, "quest/event")
                                                    : dev.oam.core.agent.TurnListener.NONE,
                                            request.toolChannel(context),
                                            operation::commit));
                    ObjectNode out = Json.object().put("quest", id);
                    Coding.turnResult(out, result);
                    return out;
                });
                return Reply.pending();
            });
            registry.register("quest/cancel", request -> {
                Quest quest = quests.get(request.params().string("quest"));
                return Reply.result(Json.object()
                        .put("cancelled", quest == null ? 0 : quest.queue().cancelAll()));
            });
        }

        @Override
        public List<String> notificationMethods() {
            return List.of("quest/event");
        }

        @Override
        public void shutdown() {
            quests.values().forEach(q -> q.queue().cancelAll());
            quests.clear();
        }
    }

    private static Conversation open() {
        return new Conversation(InMemoryClient.connect(
                BridgeConfiguration.builder().extensions(dev.oam.bridge.game.GameExtension::new, QuestMethods::new)));
    }

    @Test
    void anExtensionDrivesTurnsWithItsOwnEventsToolsQueuesAndErrors() {
        try (Conversation c = open()) {
            JsonNode caps = c.call(1, "initialize", null).path("capabilities");
            assertThat(caps.path("methods").toString())
                    .contains("\"quest/narrate\"")
                    .contains("\"npc/talk\"");
            assertThat(caps.path("notifications").toString())
                    .isEqualTo(
                            "[\"session/event\",\"tool/cancel\",\"model/progress\",\"npc/event\",\"world/changed\",\"quest/event\"]");
            c.call(
                    2,
                    "quest/create",
                    "{\"quest\":\"q1\",\"instructions\":\"Narrate.\",\"tools\":[{\"name\":\"roll_dice\","
                            + "\"description\":\"Roll a die.\"}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"roll_dice\"}]},"
                            + "{\"template\":\"You rolled {toolOutput}.\",\"chunks\":2},{\"text\":\"never\",\"delayMs\":60000}]}}");
            c.request(3, "quest/narrate", "{\"quest\":\"q1\",\"text\":\"I attack.\",\"stream\":true}");
            JsonNode call = c.toolCall();
            assertThat(call.path("params").path("quest").asText()).isEqualTo("q1");
            assertThat(call.path("params").has("session")).isFalse();
            c.reply(call, "{\"output\":\"a six\"}");
            JsonNode result = c.result(3);
            assertThat(result.path("text").asText()).isEqualTo("You rolled a six.");
            List<JsonNode> events = c.messages().stream()
                    .filter(m -> Conversation.isEvent(m, "quest/event"))
                    .toList();
            assertThat(events).isNotEmpty().allSatisfy(e -> {
                assertThat(e.path("params").path("quest").asText()).isEqualTo("q1");
                assertThat(e.path("params").path("requestId").asInt()).isEqualTo(3);
            });
            assertThat(events.stream()
                            .map(e ->
                                    e.path("params").path("event").path("type").asText()))
                    .contains("modelStep", "toolCallStarted", "toolCallCompleted", "text");
            c.request(4, "quest/narrate", "{\"quest\":\"q1\",\"text\":\"Wait.\"}");
            c.request(5, "quest/narrate", "{\"quest\":\"q1\",\"text\":\"Queued.\"}");
            assertThat(c.call(6, "quest/cancel", "{\"quest\":\"q1\"}")
                            .path("cancelled")
                            .asInt())
                    .isEqualTo(2);
            assertThat(c.error(4).path("code").asInt()).isEqualTo(-32009);
            assertThat(c.error(5).path("code").asInt()).isEqualTo(-32009);
            JsonNode missing = c.request(7, "quest/narrate", "{\"quest\":\"nope\",\"text\":\"x\"}")
                    .error(7);
            assertThat(missing.path("code").asInt()).isEqualTo(-32090);
            assertThat(missing.path("data").path("code").asText()).isEqualTo("quest_not_found");
            assertThat(missing.path("data").path("quest").asText()).isEqualTo("nope");
        }
    }
}
