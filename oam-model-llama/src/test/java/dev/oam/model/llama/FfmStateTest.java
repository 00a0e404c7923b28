package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ModelState;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 40 on the FFM engine, on the generated tiny model (both libraries, like every Ffm*Test): a lane's state saved
 * and restored gives the next turn a never-stopped conversation would have given, greedy, reading only what follows;
 * every mismatch (file edited or cut short, another model file, other context settings, tokens not those named, a
 * missing file) is refused with a warning that names why, and the next turn reads everything, with the same answer.
 */
@Timeout(300)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FfmStateTest {
    /** One lane: a restore takes the lane the conversation ran in, so nothing of it is left there. */
    private SlotEngine engine;

    private SlotEngine other;

    @TempDir
    Path folder;

    @BeforeAll
    void open() throws Exception {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        engine = open("tiny-state.gguf", "tiny-state", 512);
        other = open("tiny-state-other.gguf", "tiny-state-other", 512);
    }

    private static SlotEngine open(String fileName, String name, int context) throws Exception {
        Path file = TinyEngines.MODELS.resolve(fileName);
        if (!Files.exists(file)) {
            TinyGguf.tiny().name(name).write(file);
        }
        return (SlotEngine) EngineChoice.open(
                GgufFile.read(file),
                EngineSettings.defaults()
                        .withContextSize(context)
                        .withSlots(1)
                        .withThreads(1)
                        .withThreadsBatch(1),
                EngineChoice.Kind.FFM,
                SystemSettings.host());
    }

    private static EngineResult greedy(SlotEngine on, String prompt, Object session) throws AgentException {
        return on.generate(
                new EngineRequest(prompt, null, 24, 0, 0, 1, 1), session, d -> {}, CancellationToken.create());
    }

    private String first() {
        return engine.renderChat(List.of(
                new ChatMessage("system", "You are Gorm, the village blacksmith. Gruff but fair."),
                new ChatMessage("user", "Hello there, smith. Got any swords for the dragon at the castle door?")));
    }

    private String second(String answer) {
        return engine.renderChat(List.of(
                new ChatMessage("system", "You are Gorm, the village blacksmith. Gruff but fair."),
                new ChatMessage("user", "Hello there, smith. Got any swords for the dragon at the castle door?"),
                new ChatMessage("assistant", answer),
                new ChatMessage("user", "And a shield, merchant?")));
    }

    /** A saved first turn, and the second turn of the conversation that never stopped. */
    private record Played(ObjectNode reference, Path file, String second, EngineResult neverStopped) {}

    private Played play(String name) throws Exception {
        String first = first();
        EngineResult one = greedy(engine, first, "npc-" + name);
        Path file = folder.resolve(name + ".state");
        ModelState.Saved saved = engine.saveState(first, file);
        assertThat(saved.warnings()).isEmpty();
        assertThat(saved.reference()).isNotNull();
        String second = second(one.text());
        EngineResult two = greedy(engine, second, "npc-" + name);
        return new Played(saved.reference(), file, second, two);
    }

    @Test
    void aRestoredLaneAnswersAsTheConversationThatNeverStopped() throws Exception {
        Played played = play("gorm");
        ObjectNode reference = played.reference();
        assertThat(Files.size(played.file())).isEqualTo(reference.get("bytes").longValue());
        assertThat(reference.get("sha256").textValue()).hasSize(64);
        assertThat(reference.get("tokens").intValue()).isGreaterThan(engine.promptTokens(first()).length - 1);
        assertThat(reference.at("/dependsOn/model/sha256").textValue()).hasSize(64);
        assertThat(reference.at("/dependsOn/llama/sha256").textValue()).hasSize(64);
        assertThat(reference.at("/dependsOn/context/contextSize").intValue()).isEqualTo(512);

        ModelState.Restored restored = engine.restoreState(reference, played.file());
        assertThat(restored.warnings()).isEmpty();
        assertThat(restored.tokens()).isEqualTo(reference.get("tokens").intValue());
        EngineResult again = greedy(engine, played.second(), "restored-gorm");
        assertThat(again.text()).isEqualTo(played.neverStopped().text());
        assertThat(again.cachedInputTokens())
                .as("only what follows the saved state is read")
                .isEqualTo(played.neverStopped().cachedInputTokens())
                .isGreaterThan(0);
    }

    /** Refused: the warning names why; the next turn reads everything and answers as the conversation would have. */
    private void assertRefused(Played played, JsonNode reference, Path file, String why) throws Exception {
        ModelState.Restored restored = engine.restoreState(reference, file);
        assertThat(restored.tokens()).isZero();
        assertThat(restored.warnings()).singleElement().asString().contains(why).contains("read again");
        // another conversation fills the lane, so nothing of the saved one is left in it
        greedy(engine, "<|im_start|>user\nsomething else entirely<|im_end|>\n", "filler");
        EngineResult again = greedy(engine, played.second(), "refused");
        assertThat(again.text()).isEqualTo(played.neverStopped().text());
    }

    @Test
    void anEditedOrCutFileIsRefused() throws Exception {
        Played played = play("edited");
        byte[] bytes = Files.readAllBytes(played.file());
        Path edited = folder.resolve("edited-copy.state");
        byte[] changed = bytes.clone();
        changed[changed.length / 2] ^= 0x5A;
        Files.write(edited, changed);
        assertRefused(played, played.reference(), edited, "SHA-256");
        Path cut = folder.resolve("cut.state");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length / 2));
        assertRefused(played, played.reference(), cut, "cut short");
        assertRefused(played, played.reference(), folder.resolve("missing.state"), "does not exist");
    }

    @Test
    void anotherModelOrOtherSettingsAreRefused() throws Exception {
        Played played = play("mismatch");
        ModelState.Restored onOther = other.restoreState(played.reference(), played.file());
        assertThat(onOther.tokens()).isZero();
        assertThat(onOther.warnings()).singleElement().asString().contains("another model file");

        ObjectNode context = played.reference().deepCopy();
        ((ObjectNode) context.at("/dependsOn/context")).put("contextSize", 1024);
        assertRefused(played, context, played.file(), "other context settings");
        ObjectNode library = played.reference().deepCopy();
        ((ObjectNode) library.at("/dependsOn/llama")).put("sha256", "0".repeat(64));
        assertRefused(played, library, played.file(), "another llama.cpp library");
        ObjectNode tokens = played.reference().deepCopy();
        tokens.put("tokensSha256", "0".repeat(64));
        assertRefused(played, tokens, played.file(), "not those its reference names");
        ObjectNode empty = played.reference().deepCopy();
        empty.remove("sha256");
        assertRefused(played, empty, played.file(), "lacks");
    }

    @Test
    void aConversationNoLaneHoldsIsNotSaved() throws Exception {
        ModelState.Saved saved = engine.saveState(
                engine.renderChat(List.of(new ChatMessage("user", "never asked"))), folder.resolve("x"));
        assertThat(saved.reference()).isNull();
        assertThat(saved.warnings()).singleElement().asString().contains("no lane");
        assertThat(folder.resolve("x")).doesNotExist();
    }
}
