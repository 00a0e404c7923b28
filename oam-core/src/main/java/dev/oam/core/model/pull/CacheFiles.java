package dev.oam.core.model.pull;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

/** File steps of the model cache that need none of its state: sizes, removal, placing a checked file. */
final class CacheFiles {
    private CacheFiles() {}

    static long folderSize(Path folder) {
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(Files::isRegularFile).mapToLong(Transfer::size).sum();
        } catch (IOException e) {
            return -1;
        }
    }

    static void deleteTree(Path folder) throws IOException {
        if (!Files.exists(folder)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(folder)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** Moves a checked file into place in one step, so no reader ever sees part of it. */
    static void place(Path from, Path target) throws PullException {
        try {
            Files.createDirectories(target.getParent());
            try {
                Files.move(from, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(from, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw Transfer.io(target, e);
        }
    }
}
