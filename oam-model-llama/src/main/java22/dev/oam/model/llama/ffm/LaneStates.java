package dev.oam.model.llama.ffm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelState;
import dev.oam.model.llama.engine.SlotTable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A lane's state saved to a file and loaded back (issue 40; docs/GAMES.md, "Saving the model's state"), with
 * llama.cpp's {@code llama_state_seq_save_file}/{@code _load_file}: the lane's KV cells and the tokens they hold.
 *
 * <p>The reference a save returns names what the cells depend on: the model file (SHA-256), the llama.cpp library file
 * (SHA-256, and its build), and the context settings that shape the cells (a lane's context size, flash attention, one
 * KV cache or a stream per lane). A restore checks all of it, then the file's size and SHA-256, before llama.cpp reads
 * a byte; then the tokens llama.cpp read must be those the reference names. Any mismatch: a warning naming why, the
 * lane left empty, and the next turn reads the conversation as it would without a save.
 *
 * <p>A restored lane holds at most a lane's context of tokens, in the lane's own cells: it takes no memory a
 * conversation could not take.
 */
final class LaneStates {
    /** SHA-256 of files by path and size and modification time: a model file is hashed once per process. */
    private static final Map<String, String> HASHES = new ConcurrentHashMap<>();

    private final FfmEngine engine;
    private final LlamaNative api;
    private final SlotTable slots;
    private final Scheduler scheduler;
    private final DecodeLoop loop;
    private final Path modelFile;
    private final ObjectNode context;

    LaneStates(
            FfmEngine engine,
            LlamaNative api,
            SlotTable slots,
            Scheduler scheduler,
            DecodeLoop loop,
            Path modelFile,
            int contextSize,
            boolean flashAttention,
            boolean streams) {
        this.engine = engine;
        this.api = api;
        this.slots = slots;
        this.scheduler = scheduler;
        this.loop = loop;
        this.modelFile = modelFile;
        this.context = Json.object()
                .put("contextSize", contextSize)
                .put("flashAttention", flashAttention)
                .put("kvUnified", !streams);
    }

    /** Saves the free lane holding all of {@code prompt} to {@code file}. */
    ModelState.Saved save(int[] prompt, Path file) {
        if (engine.isClosed()) {
            return ModelState.notSaved("The model's state was not saved: the model is closed.");
        }
        SlotTable.Lease lease = slots.takeHolding(prompt);
        if (lease == null) {
            return ModelState.notSaved("The model's state was not saved: no lane of the model holds this conversation"
                    + " now (another conversation took its lane, or its last turn did not finish); a load reads the"
                    + " conversation again.");
        }
        int[] held = slots.held(lease);
        Path part = file.resolveSibling(file.getFileName() + ".part");
        long start = System.nanoTime();
        long written;
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            written = onDecodeThread(() -> scheduler.saveLane(lease.id(), held, part));
        } catch (Exception e) {
            slots.release(lease, held);
            deleteQuietly(part);
            return ModelState.notSaved("The model's state was not saved: " + e.getMessage());
        }
        slots.release(lease, held);
        try {
            if (written <= 0) {
                deleteQuietly(part);
                return ModelState.notSaved("The model's state was not saved: llama.cpp could not write " + file + ".");
            }
            move(part, file);
            ObjectNode reference = Json.object();
            reference.put("bytes", Files.size(file));
            reference.put("sha256", sha256(file));
            reference.put("tokens", held.length);
            reference.put("tokensSha256", tokensSha256(held));
            reference.set("dependsOn", dependsOn());
            Log.debug("model state of lane " + lease.id() + " (" + held.length + " tokens, " + Files.size(file)
                    + " bytes) saved to " + file + " in " + (System.nanoTime() - start) / 1_000_000 + " ms");
            return new ModelState.Saved(reference, java.util.List.of());
        } catch (IOException | RuntimeException e) {
            deleteQuietly(part);
            return ModelState.notSaved("The model's state was not saved: " + e.getMessage());
        }
    }

    /** Checks {@code reference} and {@code file}, then loads the state into a free lane. */
    ModelState.Restored restore(JsonNode reference, Path file) {
        String refused = check(reference, file);
        if (refused != null) {
            Log.warning(refused);
            return ModelState.notRestored(refused);
        }
        int tokens = reference.get("tokens").intValue();
        String tokensHash = reference.get("tokensSha256").textValue();
        SlotTable.Lease lease = slots.takeForRestore(new Object());
        if (lease == null) {
            return ModelState.notRestored(
                    "The model's state was not restored: every lane of the model is busy; the conversation is read"
                            + " again at its next turn.");
        }
        int[] loaded;
        try {
            loaded = onDecodeThread(() -> scheduler.loadLane(lease.id(), file, tokens));
        } catch (Exception e) {
            slots.release(lease, new int[0]);
            return warned("llama.cpp failed to read it (" + e.getMessage() + ")");
        }
        if (loaded == null) {
            slots.release(lease, new int[0]);
            return warned("llama.cpp refused the file (no room in the KV cache, or a file it cannot read)");
        }
        if (loaded.length != tokens || !tokensSha256(loaded).equals(tokensHash)) {
            try {
                onDecodeThread(() -> {
                    scheduler.clearLane(lease.id());
                    return null;
                });
            } catch (Exception e) {
                Log.error("emptying a lane after a refused state", e);
            }
            slots.release(lease, new int[0]);
            return warned("the tokens in the file are not those its reference names");
        }
        slots.release(lease, loaded);
        return new ModelState.Restored(loaded.length, java.util.List.of());
    }

    private static ModelState.Restored warned(String why) {
        String message = "The model's state was not restored: " + why + "; the conversation is read again.";
        Log.warning(message);
        return ModelState.notRestored(message);
    }

    /** Why {@code reference} and {@code file} cannot be loaded here, or {@code null} when they can. */
    @Nullable
    String check(JsonNode reference, Path file) {
        String prefix = "The model's state was not restored: ";
        String suffix = "; the conversation is read again.";
        if (engine.isClosed()) {
            return prefix + "the model is closed" + suffix;
        }
        if (!reference.isObject()
                || !reference.path("bytes").canConvertToLong()
                || !reference.path("sha256").isTextual()
                || !reference.path("tokens").isInt()
                || !reference.path("tokensSha256").isTextual()
                || !reference.path("dependsOn").isObject()) {
            return prefix + "its reference lacks bytes, sha256, tokens, tokensSha256 or dependsOn" + suffix;
        }
        JsonNode depends = reference.get("dependsOn");
        try {
            ObjectNode here = dependsOn();
            if (!depends.path("model").path("sha256").equals(here.get("model").get("sha256"))) {
                return prefix + "it was saved with another model file ("
                        + depends.path("model").path("file").asText("?") + "), not "
                        + modelFile.getFileName() + suffix;
            }
            if (!depends.path("llama").path("sha256").equals(here.get("llama").get("sha256"))) {
                return prefix + "it was saved with another llama.cpp library ("
                        + depends.path("llama").path("build").asText("?") + "), not " + api.describe() + suffix;
            }
            if (!depends.path("context").equals(context)) {
                return prefix + "it was saved with other context settings (" + depends.path("context") + ", here "
                        + context + ")" + suffix;
            }
        } catch (IOException e) {
            return prefix + "the model file cannot be hashed (" + e.getMessage() + ")" + suffix;
        }
        int tokens = reference.get("tokens").intValue();
        if (tokens < 1 || tokens >= context.get("contextSize").intValue()) {
            return prefix + "it covers " + tokens + " tokens, more than a conversation of this model holds" + suffix;
        }
        if (!Files.isRegularFile(file)) {
            return prefix + "its file " + file.getFileName() + " does not exist" + suffix;
        }
        try {
            long size = Files.size(file);
            if (size != reference.get("bytes").longValue()) {
                return prefix + "its file " + file.getFileName() + " has " + size + " bytes, the save says "
                        + reference.get("bytes").longValue() + " (cut short or changed)" + suffix;
            }
            if (!sha256(file).equals(reference.get("sha256").textValue())) {
                return prefix + "its file " + file.getFileName() + " changed since it was saved (its SHA-256"
                        + " differs)" + suffix;
            }
        } catch (IOException e) {
            return prefix + "its file cannot be read (" + e.getMessage() + ")" + suffix;
        }
        return null;
    }

    /** What a saved state depends on, here. */
    ObjectNode dependsOn() throws IOException {
        ObjectNode out = Json.object();
        out.set(
                "model",
                Json.object()
                        .put("file", String.valueOf(modelFile.getFileName()))
                        .put("sha256", cachedSha256(modelFile)));
        out.set("llama", Json.object().put("build", api.describe()).put("sha256", cachedSha256(api.library)));
        out.set("context", context.deepCopy());
        return out;
    }

    private <T> T onDecodeThread(Callable<T> task) throws Exception {
        return loop.call(task);
    }

    static String cachedSha256(Path file) throws IOException {
        Path real = file.toRealPath();
        String key = real + "|" + Files.size(real) + "|"
                + Files.getLastModifiedTime(real).toMillis();
        String known = HASHES.get(key);
        if (known != null) {
            return known;
        }
        String hash = sha256(real);
        HASHES.put(key, hash);
        return hash;
    }

    static String sha256(Path file) throws IOException {
        MessageDigest digest = digest();
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                digest.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** SHA-256 of the tokens as little-endian 32-bit integers. */
    static String tokensSha256(int[] tokens) {
        ByteBuffer bytes = ByteBuffer.allocate(tokens.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.asIntBuffer().put(tokens);
        return HexFormat.of().formatHex(digest().digest(bytes.array()));
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            Log.warning("cannot delete " + file + ": " + e.getMessage());
        }
    }
}
