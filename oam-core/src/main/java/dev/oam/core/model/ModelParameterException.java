package dev.oam.core.model;

import java.util.Objects;

/**
 * A model value a backend cannot use ({@link ModelBackend#create}, {@link ModelProvider#create}): it names the member
 * at fault, such as {@code model.baseUrl}, and says what is wrong with it. The bridge answers it as {@code -32602} with
 * {@link #getMessage()}; a host that took the value from somewhere else (a command-line flag, a variable) names it its
 * own way with {@link #problem()}.
 */
public final class ModelParameterException extends Exception {
    private final String member;
    private final String problem;
    private final boolean missing;

    private ModelParameterException(String member, String problem, boolean missing) {
        super(render(member, problem, missing));
        this.member = Objects.requireNonNull(member, "member");
        this.problem = Objects.requireNonNull(problem, "problem");
        this.missing = missing;
    }

    /**
     * {@code member} holds a value that cannot be used; {@code problem} reads after the member's name: {@code "must be
     * a number of seconds."}, or {@code ": the file does not exist"} (a leading colon is kept as is).
     */
    public static ModelParameterException invalid(String member, String problem) {
        return new ModelParameterException(member, problem, false);
    }

    /**
     * {@code member} is required and absent; {@code note} (may be empty) says what it is, e.g. "the .gguf file to
     * load".
     */
    public static ModelParameterException missing(String member, String note) {
        return new ModelParameterException(member, note, true);
    }

    /** The member's path inside the request, e.g. {@code model.baseUrl} or {@code npc.model.path}. */
    public String member() {
        return member;
    }

    /** What is wrong, without the member's name (for a missing member: what it is, possibly empty). */
    public String problem() {
        return problem;
    }

    public boolean isMissing() {
        return missing;
    }

    /**
     * The member in quotes and what is wrong, without the wire message's leading "Parameter" ({@code 'model.path': no
     * such file}); for a missing member, the whole message.
     */
    public String shortMessage() {
        return missing ? getMessage() : quoted(member, problem);
    }

    /** The message with the member called {@code name} instead: {@code describe("--model")}. */
    public String describe(String name) {
        return render(name, problem, missing);
    }

    private static String render(String member, String problem, boolean missing) {
        if (missing) {
            return "Missing required parameter '" + member + "'" + (problem.isEmpty() ? "" : " (" + problem + ")")
                    + ".";
        }
        return "Parameter " + quoted(member, problem);
    }

    private static String quoted(String member, String problem) {
        return "'" + member + "'" + (problem.startsWith(":") ? "" : " ") + problem;
    }
}
