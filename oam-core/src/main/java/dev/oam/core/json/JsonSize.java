package dev.oam.core.json;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * The size the memory caps count (docs/RELIABILITY.md, Limits): roughly the length of a value's compact JSON text in
 * characters, computed without writing it. Strings count their characters plus the quotes (escapes are not counted),
 * numbers their text, and every object member or list item one separator. It is additive, so a change of a subtree
 * changes the size of the whole by exactly the change of the subtree's size, which is what lets a world keep its size
 * up to date without measuring the whole state on every write.
 */
public final class JsonSize {
    private JsonSize() {}

    /** The size of {@code node}. */
    public static long of(JsonNode node) {
        return switch (node.getNodeType()) {
            case OBJECT -> {
                long size = 2;
                for (Map.Entry<String, JsonNode> member : node.properties()) {
                    size += member(member.getKey()) + of(member.getValue());
                }
                yield size;
            }
            case ARRAY -> {
                long size = 2;
                for (JsonNode item : node) {
                    size += ITEM + of(item);
                }
                yield size;
            }
            case STRING -> node.textValue().length() + 2L;
            case NUMBER -> node.asText().length();
            case BOOLEAN -> node.booleanValue() ? 4 : 5;
            default -> 4; // null, missing
        };
    }

    /** What an object member adds besides its value: the quoted key, the colon and a separator. */
    public static long member(String key) {
        return key.length() + 4L;
    }

    /** What a list item adds besides its value: a separator. */
    public static final long ITEM = 1;

    /** The size of a string value. */
    public static long of(String text) {
        return text.length() + 2L;
    }
}
