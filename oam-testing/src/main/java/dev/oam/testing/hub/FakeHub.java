package dev.oam.testing.hub;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A model hub on 127.0.0.1 that speaks what Hugging Face's hub speaks to a downloader, and PyPI's JSON API:
 *
 * <ul>
 *   <li>{@code HEAD|GET /OWNER/REPO/resolve/REV/FILE}: a 302 to {@code /cdn/SHA256} with {@code X-Linked-Etag} and
 *       {@code X-Linked-Size}; 401 with {@code X-Error-Code: GatedRepo} for a gated repository without the token; 404
 *       with {@code X-Error-Code} for what does not exist;
 *   <li>{@code GET /cdn/SHA256}: the bytes, with {@code Range} support (206 and {@code Content-Range});
 *   <li>{@code GET /api/models/OWNER/REPO/revision/main}: {@code {"siblings": [{"rfilename"}…]}};
 *   <li>{@code GET /simple/PROJECT/} (PyPI's JSON Simple API, PEP 691): the wheels of {@link #addWheel}, served from
 *       {@code /cdn/SHA256} too;
 *   <li>{@code GET /@SCOPE/NAME/-/NAME-VERSION.tgz} (an npm registry's tarball address): the tarballs of
 *       {@link #addNpmTarball}, with the same Range support and misbehaviour as {@code /cdn/}.
 * </ul>
 *
 * and misbehaves on demand: a download cut after some bytes, a lying hash, HTML instead of a redirect, a redirect
 * elsewhere, no Range support, a download held at an offset until {@link #release()}. Every request is recorded.
 */
public final class FakeHub implements AutoCloseable {
    /** A request as it arrived. */
    public record Request(
            String method,
            String path,
            @Nullable String range,
            @Nullable String authorization) {}

    private record Stored(byte[] bytes, String sha256) {}

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Map<String, Stored> files = new ConcurrentHashMap<>(); // "owner/repo/rev/file" → bytes
    private final Map<String, Stored> blobs = new ConcurrentHashMap<>(); // sha256 → bytes
    private final Map<String, String> gated = new ConcurrentHashMap<>(); // "owner/repo" → token
    private final Map<String, ObjectNode> pypi = new ConcurrentHashMap<>(); // project → its JSON Simple API page
    private final Map<String, Stored> npm = new ConcurrentHashMap<>(); // tarball path → bytes
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger cuts = new AtomicInteger();
    private volatile long cutAt = -1;
    private volatile boolean lyingHash;
    private volatile boolean html;
    private volatile @Nullable String redirectElsewhere;
    private volatile boolean noRanges;
    private volatile @Nullable String cdnHost;
    private volatile long holdAt = -1;
    private volatile CountDownLatch held = new CountDownLatch(1);
    private volatile CountDownLatch release = new CountDownLatch(1);

    private FakeHub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            try {
                handle(exchange);
            } catch (IOException | RuntimeException e) {
                // the client went away (a cancelled download): nothing to answer
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    public static FakeHub start() throws IOException {
        return new FakeHub();
    }

    /** The hub's address, for {@code HF_ENDPOINT} and {@code OAM_PYPI_ENDPOINT}. */
    public URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Serves {@code bytes} as {@code FILE} of {@code owner/repo} at {@code main}; returns their SHA-256. */
    public String addFile(String owner, String repo, String file, byte[] bytes) {
        return addFile(owner, repo, "main", file, bytes);
    }

    public String addFile(String owner, String repo, String revision, String file, byte[] bytes) {
        Stored stored = new Stored(bytes.clone(), sha256(bytes));
        files.put(owner + "/" + repo + "/" + revision + "/" + file, stored);
        blobs.put(stored.sha256(), stored);
        return stored.sha256();
    }

    /** {@code owner/repo} answers 401 unless the request carries {@code Bearer token}. */
    public void gate(String ownerRepo, String token) {
        gated.put(ownerRepo, token);
    }

    /**
     * A wheel holding {@code members} (name → bytes) as {@code project} {@code version}; returns the wheel's SHA-256.
     */
    public String addWheel(String project, String version, Map<String, byte[]> members) throws IOException {
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
        try (java.util.zip.ZipOutputStream zip = new java.util.zip.ZipOutputStream(buffer)) {
            for (Map.Entry<String, byte[]> member : new java.util.TreeMap<>(members).entrySet()) {
                zip.putNextEntry(new java.util.zip.ZipEntry(member.getKey()));
                zip.write(member.getValue());
                zip.closeEntry();
            }
        }
        byte[] wheel = buffer.toByteArray();
        String sha = sha256(wheel);
        String fileName = project.replace('-', '_') + "-" + version + "-py3-none-any.whl";
        blobs.put(sha, new Stored(wheel, sha));
        ObjectNode entry = Json.object();
        entry.put("filename", fileName);
        entry.put("url", "/cdn/" + sha);
        entry.put("size", wheel.length);
        entry.putObject("hashes").put("sha256", sha);
        ObjectNode index = pypi.computeIfAbsent(project, k -> {
            ObjectNode page = Json.object();
            page.put("name", project);
            page.putArray("files");
            return page;
        });
        ((ArrayNode) index.get("files")).add(entry);
        return sha;
    }

    /**
     * Serves {@code tgz} at npm's tarball address of {@code npmPackage} (such as {@code @scope/name}) {@code version};
     * returns its SHA-256.
     */
    public String addNpmTarball(String npmPackage, String version, byte[] tgz) {
        String bare = npmPackage.substring(npmPackage.indexOf('/') + 1);
        Stored stored = new Stored(tgz.clone(), sha256(tgz));
        npm.put("/" + npmPackage + "/-/" + bare + "-" + version + ".tgz", stored);
        return stored.sha256();
    }

    /** The next {@code times} downloads stop after byte {@code offset} of the file (the connection is closed). */
    public void cutDownloadsAt(long offset, int times) {
        cutAt = offset;
        cuts.set(times);
    }

    /** Resolve answers name a SHA-256 the bytes do not have. */
    public void lieAboutHashes(boolean lie) {
        lyingHash = lie;
    }

    /** Resolve answers are 200 HTML pages (a proxy's login page). */
    public void answerHtml(boolean value) {
        html = value;
    }

    /** Resolve answers redirect to {@code location} without the file's SHA-256. */
    public void redirectElsewhere(@Nullable String location) {
        redirectElsewhere = location;
    }

    /**
     * Resolve answers redirect to {@code http://HOST:PORT/cdn/…} (such as {@code localhost}, another host name for this
     * server), as the real hub redirects to its storage's own host; {@code null}: a path on this host.
     */
    public void cdnHost(@Nullable String host) {
        cdnHost = host;
    }

    /** Range requests are answered with the whole file (200). */
    public void ignoreRanges(boolean value) {
        noRanges = value;
    }

    /** The next download stops after byte {@code offset} until {@link #release()}; {@link #awaitHeld} waits for it. */
    public void holdDownloadAt(long offset) {
        held = new CountDownLatch(1);
        release = new CountDownLatch(1);
        holdAt = offset;
    }

    public boolean awaitHeld(long timeout, TimeUnit unit) throws InterruptedException {
        return held.await(timeout, unit);
    }

    public void release() {
        release.countDown();
    }

    public List<Request> requests() {
        return List.copyOf(requests);
    }

    /** The {@code GET /cdn/…} requests (downloads of bytes). */
    public List<Request> downloads() {
        return requests.stream()
                .filter(r -> r.method().equals("GET") && (r.path().startsWith("/cdn/") || npm.containsKey(r.path())))
                .toList();
    }

    private void handle(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        String range = exchange.getRequestHeaders().getFirst("Range");
        String authorization = exchange.getRequestHeaders().getFirst("Authorization");
        requests.add(new Request(method, path, range, authorization));
        String[] parts = path.substring(1).split("/", -1);
        Stored tarball = npm.get(path);
        if (tarball != null) {
            download(exchange, tarball.bytes(), range, method.equals("HEAD"));
        } else if (parts.length >= 5 && parts[2].equals("resolve")) {
            resolve(exchange, parts, authorization);
        } else if (parts.length == 2 && parts[0].equals("cdn")) {
            Stored stored = blobs.get(parts[1]);
            if (stored == null) {
                text(exchange, 404, "text/plain", "no such blob");
            } else {
                download(exchange, stored.bytes(), range, method.equals("HEAD"));
            }
        } else if (parts.length == 6
                && parts[0].equals("api")
                && parts[1].equals("models")
                && parts[4].equals("revision")) {
            String prefix = parts[2] + "/" + parts[3] + "/" + parts[5] + "/";
            ObjectNode json = Json.object();
            json.put("id", parts[2] + "/" + parts[3]);
            ArrayNode siblings = json.putArray("siblings");
            files.keySet().stream()
                    .filter(k -> k.startsWith(prefix))
                    .sorted()
                    .forEach(k -> siblings.addObject().put("rfilename", k.substring(prefix.length())));
            siblings.addObject().put("rfilename", "README.md");
            if (siblings.size() == 1) {
                exchange.getResponseHeaders().set("X-Error-Code", "RepoNotFound");
                text(exchange, 404, "application/json", "{\"error\":\"Repository not found\"}");
            } else {
                text(exchange, 200, "application/json", Json.write(json));
            }
        } else if (parts.length == 3 && parts[0].equals("simple") && parts[2].isEmpty()) {
            ObjectNode json = pypi.get(parts[1]);
            if (json == null) {
                text(exchange, 404, "text/plain", "Not Found");
            } else {
                text(exchange, 200, "application/vnd.pypi.simple.v1+json", Json.write(json));
            }
        } else {
            text(exchange, 404, "text/plain", "not found");
        }
    }

    private void resolve(HttpExchange exchange, String[] parts, @Nullable String authorization) throws IOException {
        String repo = parts[0] + "/" + parts[1];
        String token = gated.get(repo);
        if (token != null && !("Bearer " + token).equals(authorization)) {
            exchange.getResponseHeaders().set("X-Error-Code", "GatedRepo");
            text(exchange, 401, "application/json", "{\"error\":\"Access to model " + repo + " is restricted.\"}");
            return;
        }
        if (html) {
            text(exchange, 200, "text/html; charset=utf-8", "<!doctype html><html><body>Please log in</body></html>");
            return;
        }
        String file = String.join("/", List.of(parts).subList(4, parts.length));
        String key = repo + "/" + parts[3] + "/" + file;
        Stored stored = files.get(key);
        if (stored == null) {
            boolean repoExists = files.keySet().stream().anyMatch(k -> k.startsWith(repo + "/"));
            exchange.getResponseHeaders().set("X-Error-Code", repoExists ? "EntryNotFound" : "RepoNotFound");
            text(exchange, repoExists ? 404 : 401, "application/json", "{\"error\":\"not found\"}");
            return;
        }
        String elsewhere = redirectElsewhere;
        if (elsewhere != null) {
            exchange.getResponseHeaders().set("Location", elsewhere);
            exchange.sendResponseHeaders(302, -1);
            return;
        }
        String sha = lyingHash ? sha256((stored.sha256() + "lie").getBytes(StandardCharsets.UTF_8)) : stored.sha256();
        String cdn = cdnHost;
        exchange.getResponseHeaders()
                .set(
                        "Location",
                        (cdn == null
                                        ? ""
                                        : "http://" + cdn + ":"
                                                + server.getAddress().getPort()) + "/cdn/" + stored.sha256());
        exchange.getResponseHeaders().set("X-Linked-Etag", "\"" + sha + "\"");
        exchange.getResponseHeaders().set("X-Linked-Size", Long.toString(stored.bytes().length));
        exchange.getResponseHeaders().set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567");
        exchange.sendResponseHeaders(302, -1);
    }

    private void download(HttpExchange exchange, byte[] bytes, @Nullable String range, boolean head)
            throws IOException {
        int start = 0;
        if (range != null && !noRanges) {
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("bytes=(\\d+)-").matcher(range.strip());
            if (m.matches()) {
                start = (int) Math.min(Long.parseLong(m.group(1)), Integer.MAX_VALUE);
                if (start >= bytes.length) {
                    exchange.getResponseHeaders().set("Content-Range", "bytes */" + bytes.length);
                    exchange.sendResponseHeaders(416, -1);
                    return;
                }
            }
        }
        exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
        exchange.getResponseHeaders().set("Accept-Ranges", "bytes");
        if (start > 0) {
            exchange.getResponseHeaders()
                    .set("Content-Range", "bytes " + start + "-" + (bytes.length - 1) + "/" + bytes.length);
        }
        if (head) {
            exchange.sendResponseHeaders(start > 0 ? 206 : 200, -1);
            return;
        }
        exchange.sendResponseHeaders(start > 0 ? 206 : 200, bytes.length - start);
        OutputStream out = exchange.getResponseBody();
        long stop = bytes.length;
        if (cutAt > start && cuts.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            stop = cutAt;
        }
        long hold = holdAt;
        if (hold > start && hold < stop) {
            holdAt = -1;
            out.write(bytes, start, (int) (hold - start));
            out.flush();
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            start = (int) hold;
        }
        out.write(bytes, start, (int) (stop - start));
        out.flush();
        if (stop < bytes.length) {
            // a cut: drop the connection mid-body
            throw new IOException("cut");
        }
    }

    private static void text(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0); // a held download is not released: its connection drops, as when a hub goes away

        executor.shutdownNow();
    }

    /** Requests to the given path prefix. */
    public List<Request> requestsTo(String prefix) {
        return requests.stream().filter(r -> r.path().startsWith(prefix)).toList();
    }

    /** Paths seen, for messages. */
    public Set<String> paths() {
        return requests.stream()
                .map(Request::path)
                .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }
}
