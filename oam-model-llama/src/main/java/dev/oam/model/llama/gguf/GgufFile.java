package dev.oam.model.llama.gguf;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The header and metadata of a GGUF model file, read in Java so a bad file is refused with a clear message before
 * llama.cpp sees it (native code aborts the whole process on some malformed inputs). The tensor data is never read; the
 * tensor infos are checked against the file's size.
 *
 * <p>Every count and length in the file is checked against the bytes that remain before anything is allocated, so a
 * hostile file can neither exhaust the heap nor make the reader loop for long.
 */
public final class GgufFile {

    /** More metadata than any real model carries (a 262k-token vocabulary takes about 6 MiB). */
    static final long MAX_HEADER_BYTES = 64L << 20;

    private final Path path;
    private final long fileSize;
    private final int version;
    private final String architecture;
    private final @Nullable String name;
    private final int contextLength;
    private final @Nullable String chatTemplate;
    private final List<String> tokens;
    private final Set<String> controlTokens;
    private final List<Tensor> tensors;
    private final long dataOffset;
    private final Map<String, Object> metadata;

    /**
     * One tensor as the header describes it.
     *
     * @param shape the dimensions in GGUF order (the first is the contiguous one)
     * @param type the ggml type (0 = F32, 1 = F16, 8 = Q8_0, …)
     * @param offset where its data starts, relative to {@link #dataOffset()}
     * @param size its data in bytes
     */
    public record Tensor(String name, List<Long> shape, int type, long offset, long size) {
        public Tensor {
            shape = List.copyOf(shape);
        }
    }

    GgufFile(
            Path path,
            long fileSize,
            int version,
            Map<String, Object> metadata,
            List<Tensor> tensors,
            long dataOffset,
            String architecture,
            int contextLength,
            List<String> tokens,
            Set<String> controlTokens) {
        this.path = path;
        this.fileSize = fileSize;
        this.version = version;
        this.metadata = Collections.unmodifiableMap(metadata);
        this.tensors = List.copyOf(tensors);
        this.dataOffset = dataOffset;
        this.architecture = architecture;
        this.name = metadata.get("general.name") instanceof String s ? s : null;
        this.contextLength = contextLength;
        this.chatTemplate = metadata.get("tokenizer.chat_template") instanceof String s ? s : null;
        this.tokens = tokens;
        this.controlTokens = Collections.unmodifiableSet(controlTokens);
    }

    /**
     * Reads and checks the header of {@code path}.
     *
     * @throws GgufException when the file is missing, unreadable, not GGUF (version 2 or 3), truncated or corrupt, or
     *     lacks {@code general.architecture}, {@code <arch>.context_length} (positive) or {@code tokenizer.ggml.tokens}
     */
    public static GgufFile read(Path path) throws GgufException {
        if (Files.isDirectory(path)) {
            throw new GgufException("Model file " + path + " is a directory, not a GGUF file");
        }
        if (!Files.exists(path)) {
            throw new GgufException("Model file " + path + " does not exist");
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            return new GgufParser(path, channel).parse();
        } catch (NoSuchFileException e) {
            throw new GgufException("Model file " + path + " does not exist");
        } catch (AccessDeniedException e) {
            throw new GgufException("Model file " + path + " cannot be read: permission denied", e);
        } catch (IOException e) {
            throw new GgufException("Model file " + path + " cannot be read: " + e.getMessage(), e);
        }
    }

    public Path path() {
        return path;
    }

    public long fileSize() {
        return fileSize;
    }

    /** The GGUF version: 2 or 3. */
    public int version() {
        return version;
    }

    /** {@code general.architecture}, e.g. {@code llama}. */
    public String architecture() {
        return architecture;
    }

    /** {@code general.name}, if the file has it. */
    public @Nullable String name() {
        return name;
    }

    /** {@code <architecture>.context_length}: the context the model was trained for. */
    public int contextLength() {
        return contextLength;
    }

    /** {@code tokenizer.chat_template}, if the file has it. */
    public @Nullable String chatTemplate() {
        return chatTemplate;
    }

    /** {@code tokenizer.ggml.tokens}: the vocabulary in id order. */
    public List<String> tokens() {
        return tokens;
    }

    /**
     * The texts of the control and user-defined tokens ({@code tokenizer.ggml.token_type} 3 or 4), without empty ones.
     * Without token types, the tokens that look like {@code <…>} or {@code <|…|>}.
     */
    public Set<String> controlTokens() {
        return controlTokens;
    }

    public int tensorCount() {
        return tensors.size();
    }

    /** The tensor infos in file order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    /** Where the tensor data starts in the file. */
    public long dataOffset() {
        return dataOffset;
    }

    /**
     * Every key in file order. Integers are {@link Long} (a {@code u64} above 2^63−1 appears negative), floats
     * {@link Double}, booleans {@link Boolean}, strings {@link String}, arrays an unmodifiable {@link List} of those.
     */
    public Map<String, Object> metadata() {
        return metadata;
    }

    @Override
    public String toString() {
        return "GgufFile[" + path + ", " + architecture + ", " + tokens.size() + " tokens, " + tensors.size()
                + " tensors]";
    }
}
