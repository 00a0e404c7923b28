package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import de.kherud.llama.LlamaModel;
import de.kherud.llama.ModelParameters;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The generated model loads in the real binding and its vocabulary tokenizes as designed. The model is loaded once for
 * the class and closed once (close() leaks the native context, so never reload it in a loop).
 */
@Timeout(60)
class TinyModelLoadsTest {
    private static final String LIBRARY = "de/kherud/llama/Linux/x86_64/libjllama.so";

    @TempDir
    static Path dir;

    private static LlamaModel model;
    private static GgufFile file;

    @BeforeAll
    static void load() throws Exception {
        initNative(dir.resolve("native"));
        Path gguf = dir.resolve("models/tiny.gguf");
        TinyGguf.tiny().write(gguf);
        file = GgufFile.read(gguf);
        model = new LlamaModel(new ModelParameters()
                .setModel(gguf.toString())
                .setThreads(1)
                .setThreadsBatch(1)
                .setParallel(1)
                .disableLog()
                .setCtxSize(2048));
    }

    @AfterAll
    static void close() {
        if (model != null) {
            model.close();
        }
    }

    /**
     * Points the binding's loader at a private copy of the library and a private temporary folder before
     * {@link LlamaModel} is initialised: otherwise it prints to stdout and deletes {@code llama*} in /tmp.
     */
    private static void initNative(Path folder) throws IOException {
        Path lib = Files.createDirectories(folder.resolve("lib"));
        Path tmp = Files.createDirectories(folder.resolve("tmp"));
        try (InputStream in = LlamaModel.class.getClassLoader().getResourceAsStream(LIBRARY)) {
            assertThat(in).as(LIBRARY + " on the class path").isNotNull();
            Files.copy(in, lib.resolve("libjllama.so"));
        }
        System.setProperty("de.kherud.llama.lib.path", lib.toString());
        System.setProperty("de.kherud.llama.tmpdir", tmp.toString());
    }

    @Test
    void chatMarkersAreSingleControlTokens() {
        assertThat(model.encode("<|im_start|>")).containsExactly(3);
        assertThat(model.encode("<|im_end|>")).containsExactly(4);
        for (String control : file.controlTokens()) {
            assertThat(model.encode(control))
                    .as(control)
                    .containsExactly(file.tokens().indexOf(control));
        }
    }

    @Test
    void textRoundTripsThroughTheVocabulary() {
        for (String text : List.of(
                "the player should attack the goblin",
                "{\"name\": \"open_gate\"}",
                "hello\n\nguard",
                "café ß € ü ✓ 日本",
                "<|im_start|>user\nhello<|im_end|>\n",
                " leading space")) {
            assertThat(model.decode(model.encode(text))).isEqualTo(text);
        }
    }

    @Test
    void gameWordsAreSingleTokens() {
        assertThat(model.encode("the player should attack the goblin")).hasSize(6);
        int[] ids = model.encode("attack");
        assertThat(ids).hasSize(1);
        assertThat(file.tokens().get(ids[0])).isEqualTo("attack");
        assertThat(file.tokens().get(model.encode(" goblin")[0])).isEqualTo("\u2581goblin");
    }
}
