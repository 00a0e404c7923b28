package dev.oam.model.llama.engine;

import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.prompt.ChatRenderer;
import dev.oam.model.llama.prompt.ChatTemplate;
import dev.oam.model.llama.prompt.TurnFormat;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What the engine needs to know about the file (from {@link GgufFile}).
 *
 * @param bosToken the vocabulary's BOS text, {@code ""} without one ({@code bos_token} of the chat template)
 * @param eosToken the vocabulary's EOS text, {@code ""} without one ({@code eos_token} of the chat template)
 * @param turnFormat the format prompts are written in when the file has no chat template (then required)
 * @param floatMatrices whether the model multiplies by a floating-point matrix ({@link #floatMatrices(GgufFile)})
 */
public record ModelFile(
        Path path,
        String name,
        int contextLength,
        @Nullable String chatTemplate,
        String bosToken,
        String eosToken,
        Set<String> controlTokens,
        boolean addBos,
        @Nullable TurnFormat turnFormat,
        boolean floatMatrices) {
    public ModelFile {
        controlTokens = Set.copyOf(controlTokens);
        if (chatTemplate == null && turnFormat == null) {
            throw new IllegalArgumentException("a file without a chat template needs a turn format");
        }
    }

    /** How prompts for this file are written: its own chat template, else its turn format. */
    public ChatRenderer chatRenderer() {
        return chatTemplate == null
                ? ChatRenderer.known(Objects.requireNonNull(turnFormat))
                : ChatRenderer.ofTemplate(chatTemplate, bosToken, eosToken, addBos);
    }

    /** What an engine needs of {@code file}; a file without a chat template needs a known turn format. */
    public static ModelFile of(GgufFile file) throws GgufException {
        TurnFormat format = file.chatTemplate() == null ? TurnFormat.require(file) : null;
        String name = file.name();
        if (name == null || name.isBlank()) {
            String fileName = file.path().getFileName().toString();
            name = fileName.toLowerCase(Locale.ROOT).endsWith(".gguf")
                    ? fileName.substring(0, fileName.length() - 5)
                    : fileName;
        }
        // llama.cpp adds BOS when the file says so; without the key, SentencePiece vocabularies add it, BPE ones not.
        Object addBos = file.metadata().get("tokenizer.ggml.add_bos_token");
        boolean bos =
                addBos instanceof Boolean b ? b : !"gpt2".equals(file.metadata().get("tokenizer.ggml.model"));
        return new ModelFile(
                file.path(),
                name,
                file.contextLength(),
                file.chatTemplate(),
                ChatTemplate.bosToken(file),
                ChatTemplate.eosToken(file),
                file.controlTokens(),
                bos,
                format,
                floatMatrices(file));
    }

    /**
     * Whether the model multiplies by a floating-point matrix (F32, F16, BF16; the token embeddings count when the
     * output layer reuses them): llama.cpp b4916 sums such products in another order for one row than for several, so
     * the FFM engine pads its one-row decodes for those models. Quantised matrices (Q4_K, Q5_0, Q8_0, …) come out the
     * same for one row and several ({@code FfmGemmaTest} checks it on Gemma 3 270M: the first logits of a prompt read
     * whole and from the cache are equal without padding), and a lone session there would pay the padding for nothing.
     */
    public static boolean floatMatrices(GgufFile file) {
        boolean outputLayer = file.tensors().stream().anyMatch(t -> t.name().equals("output.weight"));
        return file.tensors().stream()
                .anyMatch(t -> t.shape().size() >= 2
                        && (t.type() == 0 || t.type() == 1 || t.type() == 30)
                        && (!t.name().equals("token_embd.weight") || !outputLayer));
    }
}
