package dev.oam.model.llama.prompt;

import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The turn formats the bridge writes itself for a GGUF file that carries no {@code tokenizer.chat_template} (base
 * models, and some conversions lose the key). A format is only ever used when the file's vocabulary has its turn
 * markers as control tokens: markers that are not single tokens are plain text to the model, which then never ends its
 * turn (ChatML on a Gemma vocabulary runs to the token budget, repeating the prompt). Several fitting formats: the one
 * made for the file's architecture first, else this order.
 *
 * <p>A file with neither a template nor any of these markers cannot be prompted as a chat at all, and is refused
 * ({@link #require}).
 */
public enum TurnFormat {
    /** Gemma 1–3: no system role (the system text opens the first user turn), the assistant is {@code model}. */
    GEMMA(
            "Gemma",
            List.of("<start_of_turn>", "<end_of_turn>"),
            Set.of("gemma", "gemma2", "gemma3", "gemma3n"),
            null,
            List.of(
                    "<start_of_turn>user\n",
                    "<end_of_turn>\n<start_of_turn>model\n",
                    "<end_of_turn>\n<start_of_turn>user\n",
                    "<end_of_turn>\n<start_of_turn>model\n")),
    /**
     * Llama 3.x: header tokens around each role, {@code <|eot_id|>} after each message (BOS comes from the tokenizer).
     */
    LLAMA3(
            "Llama 3",
            List.of("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),
            Set.of("llama"),
            List.of(
                    "<|start_header_id|>system<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
            List.of(
                    "<|start_header_id|>user<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
                    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")),
    /**
     * ChatML (Qwen, many fine-tunes): every role kept as it is, {@code tool} included ({@link ChatRenderer#chatMl}).
     */
    CHATML(
            "ChatML",
            List.of("<|im_start|>", "<|im_end|>"),
            Set.of("qwen2", "qwen2moe", "qwen3", "qwen3moe"),
            null,
            null);

    private final String label;
    private final List<String> markers;
    private final Set<String> architectures;
    private final @Nullable List<String> withSystem;
    private final @Nullable List<String> withoutSystem;

    TurnFormat(
            String label,
            List<String> markers,
            Set<String> architectures,
            @Nullable List<String> withSystem,
            @Nullable List<String> withoutSystem) {
        this.label = label;
        this.markers = markers;
        this.architectures = architectures;
        this.withSystem = withSystem;
        this.withoutSystem = withoutSystem;
    }

    /** Its name in messages ({@code "Gemma"}). */
    public String label() {
        return label;
    }

    /** The turn markers the vocabulary must hold as control tokens. */
    List<String> markers() {
        return markers;
    }

    /** The renderer's frames for this format ({@code null} for ChatML, which the renderer writes itself). */
    ChatRenderer.@Nullable Frames frames() {
        return this == CHATML ? null : new ChatRenderer.Frames(withSystem, withoutSystem, false);
    }

    /** The format for a file without a template, or {@code null} when its vocabulary has no known markers. */
    static @Nullable TurnFormat forVocabulary(String architecture, Set<String> controlTokens) {
        TurnFormat fitting = null;
        for (TurnFormat format : values()) {
            if (controlTokens.containsAll(format.markers)) {
                if (format.architectures.contains(architecture)) {
                    return format;
                }
                if (fitting == null) {
                    fitting = format;
                }
            }
        }
        return fitting;
    }

    /**
     * The format a file without its own template gets, or the reason it cannot be used.
     *
     * @throws GgufException when the file has no template and none of the known formats fits its vocabulary
     */
    public static TurnFormat require(GgufFile file) throws GgufException {
        TurnFormat format = forVocabulary(file.architecture(), file.controlTokens());
        if (format == null) {
            StringBuilder known = new StringBuilder();
            for (TurnFormat f : values()) {
                known.append(known.isEmpty() ? "" : ", ")
                        .append(f.label)
                        .append(' ')
                        .append(String.join(" ", f.markers));
            }
            throw new GgufException(
                    "Model file " + file.path() + " has no chat template (no 'tokenizer.chat_template' entry), "
                            + "and its vocabulary has the turn markers of no chat format oam knows (" + known
                            + "), so it cannot "
                            + "be prompted as a chat. Use the instruction-tuned (chat) GGUF of the model, "
                            + "which carries its template");
        }
        return format;
    }

    /** The warning for a file that has no template and gets this format. */
    public String warning(String modelName) {
        return "The model file of '" + modelName + "' has no chat template (tokenizer.chat_template); prompts use the "
                + label + " turn format (" + String.join(" ", markers) + "), which its vocabulary has. Files without a "
                + "template are often base models, which follow instructions poorly: prefer the "
                + "instruction-tuned file.";
    }
}
