package dev.oam.core.model.pull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A Hugging Face hub ({@code HF_ENDPOINT}): where a file's bytes are and what their SHA-256 is. The hub answers a
 * file's resolve address ({@code /OWNER/REPO/resolve/REVISION/FILE}) with a redirect to its storage that carries the
 * SHA-256 in {@code X-Linked-Etag} and the size in {@code X-Linked-Size}; that SHA-256 is what a download is checked
 * against. A repository's file list ({@code /api/models/OWNER/REPO/revision/REVISION}) picks the file of a
 * quantization.
 */
final class HubSource {
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final int MAX_HOPS = 5;

    private final URI endpoint;
    private final @Nullable String token;
    private final HttpClient http;
    private final Transfer requests;

    HubSource(URI endpoint, @Nullable String token, HttpClient http) {
        this.endpoint = endpoint;
        this.token = token;
        this.http = http;
        this.requests = new Transfer(http, token, endpoint.getHost(), () -> -1);
    }

    /** The file's storage address, SHA-256 and size. */
    Transfer.Remote locate(ModelName.HubFile file) throws PullException, InterruptedException {
        URI uri = address("/" + enc(file.owner()) + "/" + enc(file.repo()) + "/resolve/" + enc(file.revision()) + "/"
                + String.join("/", encAll(file.file().split("/", -1))));
        String what = file.text();
        for (int hop = 0; hop < MAX_HOPS; hop++) {
            HttpResponse<Void> response = send(uri, "HEAD", what);
            int status = response.statusCode();
            HttpHeaders headers = response.headers();
            String etag = linkedEtag(headers);
            if (status >= 300 && status < 400) {
                URI target = Transfer.redirect(uri, headers, what);
                if (etag != null) {
                    return new Transfer.Remote(target, sha256(etag, what), size(headers, what));
                }
                if (!Transfer.origin(target).equals(Transfer.origin(uri))) {
                    throw new PullException(
                            PullException.Reason.BAD_ANSWER,
                            "the hub redirected " + what + " to "
                                    + Transfer.origin(target)
                                    + " without the file's SHA-256 (X-Linked-Etag), so it cannot be checked."
                                    + " Is HF_ENDPOINT (" + endpoint + ") a Hugging Face hub?");
                }
                uri = target; // a renamed repository: the hub's own address, asked again
                continue;
            }
            if (status >= 200 && status < 300) {
                if (Transfer.isHtml(headers)) {
                    throw new PullException(
                            PullException.Reason.BAD_ANSWER,
                            Transfer.origin(uri) + " answered " + what
                                    + " with an HTML page, not the file. Is HF_ENDPOINT (" + endpoint
                                    + ") a Hugging Face hub?");
                }
                if (etag == null) {
                    throw new PullException(
                            PullException.Reason.BAD_ANSWER,
                            "the hub gave no SHA-256 (X-Linked-Etag) for " + what
                                    + ", so it cannot be checked; only files stored with Git LFS (every "
                                    + "GGUF on the public hub) can be pulled");
                }
                return new Transfer.Remote(uri, sha256(etag, what), size(headers, what));
            }
            throw failure(status, headers, what, file.owner() + "/" + file.repo());
        }
        throw new PullException(
                PullException.Reason.BAD_ANSWER, "the hub redirected " + what + " more than " + MAX_HOPS + " times");
    }

    /** The {@code .gguf} files of the repository at {@code main}. */
    List<String> files(ModelName.HubQuant name) throws PullException, InterruptedException {
        URI uri = address("/api/models/" + enc(name.owner()) + "/" + enc(name.repo()) + "/revision/"
                + ModelName.DEFAULT_REVISION);
        String what = name.owner() + "/" + name.repo();
        HttpResponse<String> response;
        try {
            response = http.send(requests.request(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw unreachable(e);
        }
        if (response.statusCode() != 200) {
            throw failure(response.statusCode(), response.headers(), what, what);
        }
        JsonNode root;
        try {
            root = Json.parse(response.body());
        } catch (IOException e) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER,
                    "the hub's file list of " + what + " is not JSON." + " Is HF_ENDPOINT (" + endpoint
                            + ") a Hugging Face hub?");
        }
        List<String> files = new ArrayList<>();
        for (JsonNode sibling : root.path("siblings")) {
            String file = sibling.path("rfilename").asText("");
            if (file.toLowerCase(Locale.ROOT).endsWith(".gguf")) {
                files.add(file);
            }
        }
        return files;
    }

    private HttpResponse<Void> send(URI uri, String method, String what) throws PullException, InterruptedException {
        try {
            return http.send(
                    requests.request(uri)
                            .method(method, java.net.http.HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            throw unreachable(e);
        }
    }

    private PullException unreachable(IOException e) {
        return new PullException(
                PullException.Reason.NETWORK,
                "cannot reach the hub at " + endpoint + ": " + Transfer.message(e)
                        + (endpoint.getHost() != null && endpoint.getHost().equals("huggingface.co")
                                ? ""
                                : " (HF_ENDPOINT)"),
                e);
    }

    private PullException failure(int status, HttpHeaders headers, String what, String repo) {
        String code = headers.firstValue("X-Error-Code").orElse("");
        if (code.equals("GatedRepo") || (status == 401 || status == 403) && !code.equals("RepoNotFound")) {
            return new PullException(
                    PullException.Reason.GATED,
                    token == null
                            ? repo + " is gated or private: accept its licence on the hub, then set "
                                    + "HF_TOKEN to an access token of yours"
                            : repo
                                    + " is gated or private and HF_TOKEN gives no access to it: accept its "
                                    + "licence on the hub with the"
                                    + " account the token belongs to");
        }
        if (status == 404 || status == 401 || code.endsWith("NotFound")) {
            String which = switch (code) {
                case "RepoNotFound" -> "the repository " + repo + " does not exist (or is private: set HF_TOKEN)";
                case "RevisionNotFound" -> "the revision of " + what + " does not exist";
                default -> what + " does not exist on the hub";
            };
            return new PullException(PullException.Reason.NOT_FOUND, which);
        }
        return new PullException(
                PullException.Reason.NETWORK, "the hub answered HTTP " + status + " for " + what + "; try again later");
    }

    private URI address(String path) {
        String base = endpoint.toString();
        return URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + path);
    }

    private static @Nullable String linkedEtag(HttpHeaders headers) {
        String value = headers.firstValue("X-Linked-Etag").orElse(null);
        if (value == null) {
            return null;
        }
        String text = value.strip();
        if (text.startsWith("W/")) {
            text = text.substring(2);
        }
        if (text.length() >= 2 && text.startsWith("\"") && text.endsWith("\"")) {
            text = text.substring(1, text.length() - 1);
        }
        return text.toLowerCase(Locale.ROOT);
    }

    private static String sha256(String etag, String what) throws PullException {
        if (!SHA256.matcher(etag).matches()) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER,
                    "the hub's X-Linked-Etag for " + what + " ('" + etag + "') is not a SHA-256");
        }
        return etag;
    }

    private static long size(HttpHeaders headers, String what) throws PullException {
        String value = headers.firstValue("X-Linked-Size")
                .or(() -> headers.firstValue("Content-Length"))
                .orElse(null);
        try {
            long size = value == null ? -1 : Long.parseLong(value.strip());
            if (size > 0) {
                return size;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new PullException(PullException.Reason.BAD_ANSWER, "the hub gave no size (X-Linked-Size) for " + what);
    }

    private static String enc(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String[] encAll(String[] segments) {
        String[] out = new String[segments.length];
        for (int i = 0; i < segments.length; i++) {
            out[i] = enc(segments[i]);
        }
        return out;
    }
}
