package dev.oam.core.model.pull;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One file fetched into a {@code .part} file with HTTP, resumed with a {@code Range} request when a part is already
 * there for the same SHA-256, and checked: the size, the SHA-256, the first bytes. The caller moves the part into
 * place; a part that failed its check is deleted, a part that was cut is kept for the next try.
 */
final class Transfer {
    /**
     * Tries of one transfer that each brought bytes before the connection broke; then the pull fails (and resumes
     * later).
     */
    private static final int RESUMES = 3;

    private static final int MAX_REDIRECTS = 5;

    /** Where the bytes are and what they must be. */
    record Remote(URI url, String sha256, long size) {}

    private final HttpClient http;
    private final @Nullable String token;
    private final @Nullable String tokenHost;
    private final LongSupplier freeSpace;
    private volatile @Nullable InputStream current;
    private volatile boolean cancelled;

    Transfer(HttpClient http, @Nullable String token, @Nullable String tokenHost, LongSupplier freeSpace) {
        this.http = http;
        this.token = token;
        this.tokenHost = tokenHost;
        this.freeSpace = freeSpace;
    }

    static HttpClient client() {
        return HttpClient.newBuilder()
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(Duration.ofSeconds(30))
                .build();
    }

    /** Stops the transfer: the read in progress ends, the part is kept. Any thread. */
    void cancel() {
        cancelled = true;
        InputStream in = current;
        if (in != null) {
            try {
                in.close();
            } catch (IOException e) {
                // closing is all we wanted
            }
        }
    }

    /** The request with the token when it goes to the host the token belongs to, never to another (a CDN). */
    HttpRequest.Builder request(URI uri) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(60))
                .header("User-Agent", "oam-java")
                .header("Accept-Encoding", "identity");
        if (token != null && tokenHost != null && tokenHost.equalsIgnoreCase(uri.getHost())) {
            builder.header("Authorization", "Bearer " + token);
        }
        return builder;
    }

    /**
     * Fetches {@code remote} into {@code part} (and {@code part}'s {@code .sha256} note, so a later pull resumes only
     * the same file), reporting to {@code listener}. Returns when the part holds exactly the file, checked.
     *
     * @param magic the first bytes the file must start with, for {@link PullException.Reason#NOT_GGUF}
     */
    void fetch(Remote remote, Path part, byte[] magic, String what, Progress listener)
            throws PullException, InterruptedException {
        Path note = part.resolveSibling(part.getFileName() + ".sha256");
        try {
            Files.createDirectories(part.getParent());
            Optional<String> noted =
                    Files.exists(note) ? Optional.of(Files.readString(note).strip()) : Optional.empty();
            if (Files.exists(part)
                    && (noted.isEmpty() || !noted.get().equals(remote.sha256()) || Files.size(part) > remote.size())) {
                Files.delete(part); // another file's bytes, or more than the file has
            }
            Files.writeString(note, remote.sha256());
        } catch (IOException e) {
            throw io(part, e);
        }
        long have = size(part);
        long needed = remote.size() - have;
        long free = freeSpace.getAsLong();
        if (needed > 0 && free >= 0 && free < needed) {
            throw new PullException(
                    PullException.Reason.DISK_FULL,
                    what + " needs " + Bytes.format(needed) + " more, but the disk of "
                            + part.getParent() + " has " + Bytes.format(free)
                            + " free. Free some space (oam models rm NAME) or set"
                            + " OAM_MODEL_CACHE to a folder on a larger disk.");
        }
        int broken = 0;
        while (size(part) < remote.size()) {
            long before = size(part);
            try {
                receive(remote, part, magic, what, listener);
            } catch (PullException e) {
                if (e.reason() == PullException.Reason.NOT_GGUF || e.reason() == PullException.Reason.BAD_ANSWER) {
                    deleteQuietly(part); // not the file: nothing of it is kept
                    deleteQuietly(note);
                }
                if (e.reason() != PullException.Reason.NETWORK
                        || cancelled
                        || size(part) == before
                        || ++broken >= RESUMES) {
                    throw e;
                }
                // bytes came before the break: resume at once with a Range request
            }
        }
        listener.progress(remote.size(), remote.size());
        String sum = sha256(part);
        if (!sum.equals(remote.sha256())) {
            deleteQuietly(part);
            deleteQuietly(note);
            throw new PullException(
                    PullException.Reason.HASH_MISMATCH,
                    what + " arrived with SHA-256 " + sum + ", but the source"
                            + " published " + remote.sha256()
                            + "; nothing was kept. Try again; if it happens again the source or something"
                            + " between it and you is serving other bytes.");
        }
        if (!startsWith(part, magic)) {
            deleteQuietly(part);
            deleteQuietly(note);
            throw notGguf(what);
        }
    }

    /** One GET (with its redirects), appended to the part. */
    private void receive(Remote remote, Path part, byte[] magic, String what, Progress listener)
            throws PullException, InterruptedException {
        long have = size(part);
        URI uri = remote.url();
        HttpResponse<InputStream> response = null;
        for (int hop = 0; ; hop++) {
            checkCancelled(what);
            HttpRequest.Builder request = request(uri).GET();
            if (have > 0) {
                request.header("Range", "bytes=" + have + "-");
            }
            try {
                response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException e) {
                throw new PullException(
                        PullException.Reason.NETWORK,
                        "cannot reach " + origin(uri) + " for " + what + ": " + message(e)
                                + ". Run the pull again to resume.",
                        e);
            }
            int status = response.statusCode();
            if (status >= 300 && status < 400 && status != 304) {
                closeQuietly(response.body());
                if (hop >= MAX_REDIRECTS) {
                    throw new PullException(
                            PullException.Reason.BAD_ANSWER,
                            "the download of " + what + " was redirected more than " + MAX_REDIRECTS + " times");
                }
                uri = redirect(uri, response.headers(), what);
                continue;
            }
            break;
        }
        int status = response.statusCode();
        InputStream body = response.body();
        try {
            boolean append;
            if (status == 206) {
                long start = rangeStart(response.headers());
                if (start != have) {
                    throw new PullException(
                            PullException.Reason.BAD_ANSWER,
                            "the server answered the range request for " + what + " from byte " + start + " instead of "
                                    + have);
                }
                append = true;
            } else if (status == 200) {
                append = false; // no range support: start over
            } else if (status == 416 && have == remote.size()) {
                return;
            } else if (status == 401 || status == 403) {
                throw new PullException(
                        PullException.Reason.GATED, "the download of " + what + " was refused (HTTP " + status + ")");
            } else if (status == 404) {
                throw new PullException(
                        PullException.Reason.NOT_FOUND, "the download of " + what + " is not there (HTTP 404)");
            } else {
                throw new PullException(
                        PullException.Reason.NETWORK,
                        origin(uri) + " answered HTTP " + status + " for " + what
                                + ". Run the pull again later to resume.");
            }
            if (isHtml(response.headers())) {
                throw new PullException(
                        PullException.Reason.BAD_ANSWER,
                        origin(uri) + " answered the download of " + what
                                + " with an HTML page, not the file (a login page or a proxy's?)");
            }
            copy(body, part, append, magic, what, listener, remote.size());
        } finally {
            closeQuietly(body);
        }
    }

    private void copy(
            InputStream body, Path part, boolean append, byte[] magic, String what, Progress listener, long total)
            throws PullException, InterruptedException {
        current = body;
        try (FileChannel out = FileChannel.open(
                part,
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                append ? StandardOpenOption.APPEND : StandardOpenOption.TRUNCATE_EXISTING)) {
            long done = out.size();
            if (cancelled) {
                throw new PullException(PullException.Reason.CANCELLED, "the pull of " + what + " was cancelled");
            }
            listener.progress(done, total);
            byte[] buffer = new byte[64 * 1024];
            boolean checked = done >= magic.length;
            while (true) {
                int n;
                try {
                    n = body.read(buffer);
                } catch (IOException e) {
                    checkCancelled(what);
                    throw new PullException(
                            PullException.Reason.NETWORK,
                            "the download of " + what + " broke at " + Bytes.format(done) + " of " + Bytes.format(total)
                                    + ": " + message(e) + ". Run the pull again to resume.",
                            e);
                }
                if (n < 0) {
                    break;
                }
                if (done + n > total) {
                    throw new PullException(
                            PullException.Reason.BAD_ANSWER,
                            "the download of " + what + " is longer than the " + total + " bytes the source published");
                }
                if (!checked && done + n >= magic.length) {
                    byte[] head = new byte[magic.length];
                    int fromFile = (int) done;
                    if (fromFile > 0) {
                        out.read(ByteBuffer.wrap(head, 0, fromFile), 0);
                    }
                    System.arraycopy(buffer, 0, head, fromFile, magic.length - fromFile);
                    if (!java.util.Arrays.equals(head, magic)) {
                        throw isText(head)
                                ? new PullException(
                                        PullException.Reason.BAD_ANSWER,
                                        "the download of " + what
                                                + " is text (an HTML page or an error message?), not the file")
                                : notGguf(what);
                    }
                    checked = true;
                }
                ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, n);
                while (chunk.hasRemaining()) {
                    out.write(chunk);
                }
                done += n;
                listener.progress(done, total);
                if (Thread.interrupted()) {
                    cancelled = true;
                }
                checkCancelled(what);
            }
            if (done < total) {
                checkCancelled(what);
                throw new PullException(
                        PullException.Reason.NETWORK,
                        "the download of " + what + " stopped at " + Bytes.format(done) + " of " + Bytes.format(total)
                                + ". Run the pull again to resume.");
            }
        } catch (IOException e) {
            if (cancelled
                    || Thread.currentThread().isInterrupted()
                    || e instanceof java.nio.channels.ClosedByInterruptException) {
                cancelled = true;
                throw new PullException(
                        PullException.Reason.CANCELLED,
                        "the pull of " + what + " was cancelled; the next pull resumes");
            }
            throw writeFailure(part, e);
        } finally {
            current = null;
        }
    }

    private PullException writeFailure(Path part, IOException e) {
        String text = message(e).toLowerCase(Locale.ROOT);
        if (text.contains("no space") || text.contains("disk full") || text.contains("quota")) {
            return new PullException(
                    PullException.Reason.DISK_FULL,
                    "the disk of " + part.getParent() + " is full (" + message(e)
                            + "). Free some space (oam models rm NAME) or set OAM_MODEL_CACHE to a folder "
                            + "on a larger disk; the next pull"
                            + " resumes.",
                    e);
        }
        return io(part, e);
    }

    private void checkCancelled(String what) throws PullException {
        if (cancelled || Thread.currentThread().isInterrupted()) {
            cancelled = true;
            throw new PullException(
                    PullException.Reason.CANCELLED, "the pull of " + what + " was cancelled; the next pull resumes");
        }
    }

    /** The target of a redirect, checked: http or https only. */
    static URI redirect(URI from, HttpHeaders headers, String what) throws PullException {
        String location = headers.firstValue("Location").orElse(null);
        if (location == null || location.isBlank()) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER, origin(from) + " redirected " + what + " nowhere (no Location)");
        }
        URI target;
        try {
            target = from.resolve(location.strip());
        } catch (IllegalArgumentException e) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER, origin(from) + " redirected " + what + " to a malformed address");
        }
        String scheme = target.getScheme() == null ? "" : target.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || target.getHost() == null) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER,
                    origin(from) + " redirected " + what + " to '" + location + "', which is not an http(s) address");
        }
        return target;
    }

    static boolean isHtml(HttpHeaders headers) {
        String type = headers.firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
        return type.startsWith("text/html") || type.startsWith("application/xhtml");
    }

    private static long rangeStart(HttpHeaders headers) throws PullException {
        String range = headers.firstValue("Content-Range").orElse("");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("bytes\\s+(\\d+)-\\d+/(\\d+|\\*)")
                .matcher(range.strip());
        if (!m.matches()) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER,
                    "a partial answer without a valid Content-Range ('" + range + "')");
        }
        return Long.parseLong(m.group(1));
    }

    static String origin(URI uri) {
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "");
    }

    static PullException notGguf(String what) {
        return new PullException(
                PullException.Reason.NOT_GGUF,
                what + " is not a GGUF model file (it does not start with 'GGUF');" + " nothing was kept");
    }

    private static boolean isText(byte[] head) {
        for (byte b : head) {
            if (b < 0x09 || b > 0x7e) {
                return false;
            }
        }
        return true;
    }

    static PullException io(Path path, IOException e) {
        return new PullException(
                PullException.Reason.IO, "cannot write the model cache at " + path.getParent() + ": " + message(e), e);
    }

    static String message(Throwable e) {
        String text = e.getMessage();
        return text == null || text.isBlank() ? e.getClass().getSimpleName() : text;
    }

    static long size(Path path) {
        try {
            return Files.exists(path) ? Files.size(path) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    static boolean startsWith(Path path, byte[] magic) throws PullException {
        try (InputStream in = Files.newInputStream(path)) {
            return java.util.Arrays.equals(in.readNBytes(magic.length), magic);
        } catch (IOException e) {
            throw io(path, e);
        }
    }

    /** The file's SHA-256, reading it once (a resumed download's first bytes were hashed by no one yet). */
    static String sha256(Path path) throws PullException {
        MessageDigest digest = sha256();
        try (FileChannel in = FileChannel.open(path)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
            while (in.read(buffer) >= 0) {
                buffer.flip();
                digest.update(buffer);
                buffer.clear();
            }
        } catch (IOException e) {
            throw io(path, e);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // a leftover part is overwritten next time
        }
    }

    static void closeQuietly(@Nullable InputStream in) {
        if (in != null) {
            try {
                in.close();
            } catch (IOException e) {
                // nothing more to read
            }
        }
    }

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** Progress of bytes of the current file, before any scaling to a whole pull. */
    @FunctionalInterface
    interface Progress {
        void progress(long done, long total);
    }
}
