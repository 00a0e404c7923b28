package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sessions on the generated model, through the wire: cancel and delete mid-generation, the prompt cache and exact token
 * counts, parallel slots, greedy reproducibility, {@code maxResponseTokens}, availability, bad model values, and no
 * leaked threads or heap over many sessions.
 */
@Timeout(120)
class LlamaSessionWireTest extends LlamaWireSupport {
    /**
     * Sampled at a fixed seed, with room for a long answer: the tiny model's random text runs without end of text (its
     * greedy text loops, which the engine's repetition guard now ends early).
     */
    static final String LONG_GREEDY =
            "{\"temperature\":1.0,\"sampling\":{\"topK\":40,\"seed\":7},\"maxResponseTokens\":1500}";

    private JsonNode firstText(Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        return c.await(
                m -> "session/event".equals(m.path("method").asText())
                        && Json.write(m.path("params").path("requestId")).equals(key)
                        && m.path("params").path("event").path("type").asText().equals("text"),
                "a text event of " + key);
    }

    @Test
    void cancelMidGenerationIsCancelledAndLeavesNoTrace() {
        c.call(
                "c",
                "session/create",
                "{\"session\":\"talk\",\"instructions\":\"You are a guard.\",\"options\":" + LONG_GREEDY + "}");
        c.request(
                "r1",
                "session/respond",
                "{\"session\":\"talk\",\"prompt\":\"Tell me about the forgotten dragon.\",\"stream\":true}");
        firstText("r1");
        JsonNode cancelled = c.call("x", "session/cancel", "{\"session\":\"talk\"}");
        assertThat(cancelled.path("cancelled").asInt()).isEqualTo(1);
        JsonNode error = c.error("r1");
        assertThat(error.path("code").asInt()).isEqualTo(-32009);
        assertThat(code(error)).isEqualTo("cancelled");

        JsonNode second = c.call("r2", "session/respond", "{\"session\":\"talk\",\"prompt\":\"Open the gate.\"}");
        // How long the answer runs is the sampler's free choice on the generated model; that the first one was cut
        // mid-answer is what the cancelled count and the error above say.
        assertThat(second.path("text").asText()).isNotEmpty();
        assertThat(second.path("usage").path("outputTokens").asInt()).isPositive();
        String transcript = Json.write(c.call("t", "session/transcript", "{\"session\":\"talk\"}"));
        assertThat(transcript).contains("Open the gate.").doesNotContain("forgotten dragon");
        JsonNode listed = c.call("l", "session/list", null).path("sessions").get(0);
        assertThat(listed.path("entries").asInt())
                .as("one prompt and one response")
                .isEqualTo(2);
        assertThat(listed.path("busy").asBoolean()).isFalse();
    }

    @Test
    void deleteMidGenerationCancelsAndTheBridgeKeepsServing() {
        c.call("c", "session/create", "{\"session\":\"gone\",\"options\":" + LONG_GREEDY + "}");
        c.request(
                "r1",
                "session/respond",
                "{\"session\":\"gone\",\"prompt\":\"Tell me about the forgotten dragon.\",\"stream\":true}");
        firstText("r1");
        assertThat(c.call("d", "session/delete", "{\"session\":\"gone\"}")
                        .path("deleted")
                        .asBoolean())
                .isTrue();
        assertThat(c.error("r1").path("code").asInt()).isEqualTo(-32009);
        assertThat(c.request("r2", "session/respond", "{\"session\":\"gone\",\"prompt\":\"Hi.\"}")
                        .error("r2")
                        .path("code")
                        .asInt())
                .isEqualTo(-32020);
        c.call("c2", "session/create", "{\"session\":\"next\",\"options\":{\"maxResponseTokens\":8}}");
        assertThat(c.call("r3", "session/respond", "{\"session\":\"next\",\"prompt\":\"Hi.\"}")
                        .path("text")
                        .isTextual())
                .isTrue();
    }

    /** ChatML as the tiny model's template writes it, by hand: the reference for exact token counts. */
    private static String chatMl(String... roleAndContent) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < roleAndContent.length; i += 2) {
            out.append("<|im_start|>")
                    .append(roleAndContent[i])
                    .append('\n')
                    .append(roleAndContent[i + 1])
                    .append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }

    @Test
    void inputTokensAreExactAndTheSecondTurnHitsThePromptCache() {
        String instructions = "You are the gate guard of the old castle.";
        c.call(
                "c",
                "session/create",
                "{\"session\":\"cache\",\"instructions\":\"" + instructions + "\",\"options\":"
                        + "{\"sampling\":\"greedy\",\"maxResponseTokens\":24}}");
        JsonNode first = c.call("r1", "session/respond", "{\"session\":\"cache\",\"prompt\":\"Who goes there?\"}");
        JsonNode second =
                c.call("r2", "session/respond", "{\"session\":\"cache\",\"prompt\":\"Open the north gate, please.\"}");
        var model = bridgeSystemModel(); // loaded: the session above used it
        int bos = 1; // the tiny model's tokenizer.ggml.add_bos_token
        String prompt1 = chatMl("system", instructions, "user", "Who goes there?");
        String prompt2 = chatMl(
                "system",
                instructions,
                "user",
                "Who goes there?",
                "assistant",
                first.path("text").asText(),
                "user",
                "Open the north gate, please.");
        JsonNode usage1 = first.path("usage");
        JsonNode usage2 = second.path("usage");
        assertThat(usage1.path("inputTokens").asInt()).isEqualTo(bos + model.countTokens(prompt1));
        assertThat(usage2.path("inputTokens").asInt()).isEqualTo(bos + model.countTokens(prompt2));
        assertThat(usage1.path("cachedInputTokens").asInt())
                .as("a new conversation")
                .isLessThan(usage1.path("inputTokens").asInt() / 2);
        assertThat(usage2.path("cachedInputTokens").asInt())
                .as("turn 1's prompt is reused")
                .isGreaterThanOrEqualTo(usage1.path("inputTokens").asInt() - 2)
                .isLessThan(usage2.path("inputTokens").asInt());
        assertThat(usage2.path("totalTokens").asInt())
                .isEqualTo(usage2.path("inputTokens").asInt()
                        + usage2.path("outputTokens").asInt());
        assertThat(usage1.path("outputTokens").asInt()).isBetween(1, 24);
    }

    @Test
    void twoSessionsGenerateAtOnceAndGreedyIsReproducible() {
        c.call(
                "a",
                "session/create",
                "{\"session\":\"a\",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":400}}");
        c.call(
                "b",
                "session/create",
                "{\"session\":\"b\",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":400}}");
        c.request(
                "ra",
                "session/respond",
                "{\"session\":\"a\",\"prompt\":\"Tell me about the goblin king.\",\"stream\":true}");
        c.request(
                "rb",
                "session/respond",
                "{\"session\":\"b\",\"prompt\":\"Tell me about the castle.\",\"stream\":true}");
        JsonNode a = c.result("ra");
        JsonNode b = c.result("rb");
        assertThat(streamedText(c.events("ra"))).isEqualTo(a.path("text").asText());
        assertThat(streamedText(c.events("rb"))).isEqualTo(b.path("text").asText());

        // the same history and prompt on two fresh sessions, one after the other, answer identically (a third
        // goes first so that both find the whole prompt in the cache: a prompt evaluated in one batch or from
        // the cache may differ in the last bits)
        JsonNode history = c.call("h", "session/transcript", "{\"session\":\"a\"}");
        String options = "\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":64}";
        c.call("w", "session/create", "{\"session\":\"w\",\"history\":" + Json.write(history) + "," + options + "}");
        c.call("rw", "session/respond", "{\"session\":\"w\",\"prompt\":\"And the queen?\"}");
        c.call("x", "session/create", "{\"session\":\"x\",\"history\":" + Json.write(history) + "," + options + "}");
        c.call("y", "session/create", "{\"session\":\"y\",\"history\":" + Json.write(history) + "," + options + "}");
        JsonNode x = c.call("rx", "session/respond", "{\"session\":\"x\",\"prompt\":\"And the queen?\"}");
        JsonNode y = c.call("ry", "session/respond", "{\"session\":\"y\",\"prompt\":\"And the queen?\"}");
        assertThat(x.path("text").asText())
                .isNotEmpty()
                .isEqualTo(y.path("text").asText());
        assertThat(x.path("usage").path("inputTokens"))
                .isEqualTo(y.path("usage").path("inputTokens"));
    }

    @Test
    void maxResponseTokensBoundsTheOutput() {
        c.call(
                "c",
                "session/create",
                "{\"session\":\"short\",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":5}}");
        c.call(
                "l",
                "session/create",
                "{\"session\":\"long\",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":100}}");
        JsonNode cut = c.call(
                "r1", "session/respond", "{\"session\":\"short\",\"prompt\":\"Tell me about the forgotten dragon.\"}");
        JsonNode full = c.call(
                "r2", "session/respond", "{\"session\":\"long\",\"prompt\":\"Tell me about the forgotten dragon.\"}");
        assertThat(cut.path("usage").path("outputTokens").asInt()).isBetween(1, 5);
        assertThat(full.path("usage").path("outputTokens").asInt())
                .as("without the bound it goes on")
                .isGreaterThan(5);
        assertThat(full.path("text").asText()).startsWith(cut.path("text").asText());
    }

    @Test
    void availabilityReportsTheGgufNameAndBadModelValuesAreInvalidParams() throws Exception {
        c.call("c", "session/create", "{\"session\":\"warm\",\"options\":{\"maxResponseTokens\":4}}");
        c.call("w", "session/respond", "{\"session\":\"warm\",\"prompt\":\"Hi.\"}"); // the model has loaded
        JsonNode availability = c.call("a", "model/availability", null);
        assertThat(availability.path("available").asBoolean()).isTrue();
        assertThat(availability.path("variant").asText()).isEqualTo(NAME);
        assertThat(availability.path("contextSize").asInt()).isEqualTo(CONTEXT);
        assertThat(availability.path("supportedLanguages"))
                .extracting(JsonNode::asText)
                .containsExactly("en");
        assertThat(c.call("i", "initialize", "{\"protocolVersion\":\"1.0\"}").path("model"))
                .isEqualTo(availability);

        Path dir = model().getParent();
        Path missing = dir.resolve("missing.gguf");
        Path text = dir.resolve("notes.gguf");
        Files.writeString(text, "not a model at all");
        c.request(
                "m",
                "session/create",
                "{\"session\":\"m\",\"model\":{\"type\":\"llama\",\"path\":"
                        + Json.write(Json.mapper().valueToTree(missing.toString())) + "}}");
        JsonNode noFile = c.error("m");
        assertThat(noFile.path("code").asInt()).isEqualTo(-32602);
        assertThat(noFile.path("message").asText()).contains("'model.path'").contains("does not exist");
        c.request(
                "n",
                "session/create",
                "{\"session\":\"n\",\"model\":{\"type\":\"llama\",\"path\":"
                        + Json.write(Json.mapper().valueToTree(text.toString())) + "}}");
        JsonNode notGguf = c.error("n");
        assertThat(notGguf.path("code").asInt()).isEqualTo(-32602);
        assertThat(notGguf.path("message").asText()).contains("'model.path'").contains("not a GGUF");
        c.request("o", "session/create", "{\"session\":\"o\",\"model\":" + spec(",\"contextSize\":1024") + "}");
        JsonNode tooLarge = c.error("o");
        assertThat(tooLarge.path("message").asText()).contains("'model.contextSize'");

        assertThat(c.call("list", "session/list", null).path("sessions")).hasSize(1);
        c.call(
                "ok",
                "session/create",
                "{\"session\":\"ok\",\"model\":" + spec("") + ",\"options\":{\"maxResponseTokens\":4}}");
        assertThat(c.call("r", "session/respond", "{\"session\":\"ok\",\"prompt\":\"Hi.\"}")
                        .path("usage")
                        .path("outputTokens")
                        .asInt())
                .isPositive();
    }

    @Test
    void manySessionsLeaveNoThreadsAndNoHeapBehind() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Runnable cycle = new Runnable() {
            int n;

            @Override
            public void run() {
                String id = "h" + n++;
                c.call(
                        "c" + id,
                        "session/create",
                        "{\"session\":\"" + id + "\",\"instructions\":\"You are a guard.\","
                                + "\"options\":{\"maxResponseTokens\":8}}");
                c.call(
                        "r" + id,
                        "session/respond",
                        "{\"session\":\"" + id + "\",\"prompt\":\"Hi, guard number " + n + ".\"}");
                c.call("d" + id, "session/delete", "{\"session\":\"" + id + "\"}");
            }
        };
        for (int i = 0; i < 10; i++) {
            cycle.run();
        }
        int threadsBefore = threads.getThreadCount();
        long heapBefore = usedHeapAfterGc();
        for (int i = 0; i < 100; i++) {
            cycle.run();
        }
        assertThat(threads.getThreadCount())
                .as("live platform threads")
                .isBetween(threadsBefore - 3, threadsBefore + 3);
        assertThat(usedHeapAfterGc() - heapBefore).as("heap growth in bytes").isLessThan(16L << 20);
        assertThat(c.call("list", "session/list", null).path("sessions")).isEmpty();
    }

    private static long usedHeapAfterGc() {
        System.gc();
        System.gc();
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }
}
