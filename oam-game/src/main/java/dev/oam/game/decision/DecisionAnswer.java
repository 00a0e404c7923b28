package dev.oam.game.decision;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The model's decision JSON {@code {"reasoning", "choice", "confidence"}}, read leniently (docs/GAMES.md, "What a model
 * may get wrong"): the choice is matched exactly, then case-insensitively; a missing confidence is 50; confidence is
 * rounded and clamped to 0–100; a missing reasoning is empty.
 */
record DecisionAnswer(String optionID, String reasoning, int confidence) {
    static final int DEFAULT_CONFIDENCE = 50;

    private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);

    /** Reads an answer; a choice that matches no option is {@code generation_failed}. */
    static DecisionAnswer read(@Nullable JsonNode answer, List<String> ids) throws AgentException {
        if (answer == null || !answer.isObject()) {
            throw new AgentException(ErrorCode.GENERATION_FAILED, "The model's decision is not a JSON object.");
        }
        JsonNode choice = answer.get("choice");
        String id = choice != null && choice.isTextual() ? match(choice.textValue(), ids) : null;
        if (id == null) {
            throw new AgentException(
                    ErrorCode.GENERATION_FAILED,
                    "The model chose "
                            + (choice == null || choice.isNull() ? "no option" : Json.write(choice))
                            + ", which is not one of the option ids " + Json.write(Json.strings(ids)) + ".");
        }
        return new DecisionAnswer(id, reasoning(answer.get("reasoning")), confidence(answer.get("confidence")));
    }

    /**
     * The answer in the form the decision schema demands (keys in schema order, the choice spelled as the option id,
     * confidence an integer 0–100), or {@code null} when it names no option: then it is left to the schema check to say
     * what is wrong.
     */
    static @Nullable ObjectNode normalize(@Nullable JsonNode answer, List<String> ids) {
        DecisionAnswer read;
        try {
            read = read(answer, ids);
        } catch (AgentException e) {
            return null;
        }
        ObjectNode node = Json.object();
        node.put("reasoning", read.reasoning());
        node.put("choice", read.optionID());
        node.put("confidence", read.confidence());
        return node;
    }

    /** The option id {@code choice} names: an exact match first, then one ignoring case and surrounding space. */
    static @Nullable String match(String choice, List<String> ids) {
        for (String id : ids) {
            if (id.equals(choice)) {
                return id;
            }
        }
        String wanted = choice.strip().toLowerCase(Locale.ROOT);
        for (String id : ids) {
            if (id.toLowerCase(Locale.ROOT).equals(wanted)) {
                return id;
            }
        }
        return null;
    }

    /** Rounded (half up) and clamped to 0–100; absent or unreadable → 50. Numeric strings such as "80%" count. */
    static int confidence(@Nullable JsonNode value) {
        BigDecimal number = null;
        if (value != null && value.isNumber()) {
            number = value.decimalValue();
        } else if (value != null && value.isTextual()) {
            String text = value.textValue().strip();
            if (text.endsWith("%")) {
                text = text.substring(0, text.length() - 1).strip();
            }
            try {
                number = new BigDecimal(text);
            } catch (NumberFormatException e) {
                number = null;
            }
        }
        if (number == null) {
            return DEFAULT_CONFIDENCE;
        }
        // Clamp before rounding: rounding 1e999999999 would build a billion digits.
        if (number.signum() < 0) {
            return 0;
        }
        if (number.compareTo(HUNDRED) > 0) {
            return 100;
        }
        return number.setScale(0, RoundingMode.HALF_UP).intValueExact();
    }

    private static String reasoning(@Nullable JsonNode value) {
        if (value == null || value.isNull()) {
            return "";
        }
        return value.isTextual() ? value.textValue().strip() : Json.write(value);
    }
}
