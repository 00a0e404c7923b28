package dev.oam.testing.contract;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** The member names of a JSON object in document order, for assertions on the order of a result's keys. */
final class JsonKeys {
    private JsonKeys() {}

    static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }
}
