package dev.oam.bridge.game;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * The folder where model-state files of saves live (docs/GAMES.md, "Saving the model's state"): {@value #VARIABLE}, or
 * what a Java host sets with {@link GameExtension#saveFolder(Path)}. A file name a client gives or a save names is
 * relative to it and must stay inside it: no absolute path, no {@code ..}, no link leading out.
 */
final class SaveFolder {
    /** The environment variable naming the folder. */
    static final String VARIABLE = dev.oam.bridge.spi.ExtensionContext.SAVE_FOLDER_VARIABLE;

    private SaveFolder() {}

    /** The file {@code name} names inside {@code folder}; a message saying why not otherwise. */
    sealed interface Resolved {}

    record File(Path path) implements Resolved {}

    record Refused(String why) implements Resolved {}

    static Resolved resolve(@Nullable Path folder, String name) {
        if (folder == null) {
            return new Refused("no save folder is configured (set " + VARIABLE + ", or GameExtension.saveFolder in a"
                    + " Java host)");
        }
        if (name.isBlank() || name.indexOf('\0') >= 0 || name.length() > 255) {
            return new Refused("the file name '" + name + "' is not a file name");
        }
        Path relative;
        try {
            relative = Path.of(name);
        } catch (RuntimeException e) {
            return new Refused("the file name '" + name + "' is not a file name");
        }
        if (relative.isAbsolute() || relative.getRoot() != null) {
            return new Refused("the file name '" + name + "' is absolute; it must be relative to the save folder");
        }
        for (Path part : relative) {
            if (part.toString().equals("..")) {
                return new Refused("the file name '" + name + "' leads out of the save folder");
            }
        }
        try {
            Path root = folder.toAbsolutePath().normalize();
            Path target = root.resolve(relative).normalize();
            if (!target.startsWith(root) || target.equals(root)) {
                return new Refused("the file name '" + name + "' leads out of the save folder");
            }
            // a link inside the folder must not lead out of it either
            Path realRoot = Files.exists(root) ? root.toRealPath() : root;
            Path existing = target;
            while (existing != null && existing.startsWith(root) && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            if (existing != null
                    && existing.startsWith(root)
                    && !existing.toRealPath().startsWith(realRoot)) {
                return new Refused("the file name '" + name + "' leads out of the save folder (through a link)");
            }
            return new File(target);
        } catch (IOException | RuntimeException e) {
            return new Refused("the file name '" + name + "' cannot be used (" + e.getMessage() + ")");
        }
    }
}
