package dev.oam.game.world;

import static dev.oam.game.world.WorldStateTest.json;
import static dev.oam.game.world.WorldStateTest.world;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.json.JsonSize;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The world size caps (docs/RELIABILITY.md, Limits): per world and across the worlds sharing a budget. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WorldBudgetTest {
    @Test
    void theKeptSizeIsExactlyTheSizeOfTheStateAfterAnyMixOfWrites() throws Exception {
        WorldBudget budget = new WorldBudget(1 << 20, 1 << 20);
        WorldState world = world("{\"party\": [{\"name\": \"Aria\"}], \"gate\": {\"open\": false}, \"n\": null}");
        world.limitTo(budget);
        Random random = new Random(17);
        List<String> paths = List.of(
                "party.0.name",
                "party.1",
                "party.3",
                "gate",
                "gate.open",
                "gate.code.digits",
                "n.deep",
                "stats[\"hp.max\"]",
                "flags.0",
                "",
                "party",
                "new.a.b.c");
        List<String> values =
                List.of("1", "\"text\"", "null", "{\"x\": [1, 2, {\"y\": null}]}", "[]", "{}", "[true, \"é\"]");
        for (int i = 0; i < 2_000; i++) {
            String path = paths.get(random.nextInt(paths.size()));
            JsonNode value = json(values.get(random.nextInt(values.size())));
            try {
                switch (random.nextInt(3)) {
                    case 0 -> world.set(path, value);
                    case 1 -> world.merge(path, value);
                    default -> world.remove(path);
                }
            } catch (WorldException refused) {
                // a write the world refuses changes nothing; the sizes below must still agree
            }
            assertThat(world.size())
                    .as("after step %d at %s: %s", i, path, world.snapshot())
                    .isEqualTo(JsonSize.of(world.snapshot()));
            assertThat(budget.used()).isEqualTo(world.size());
        }
    }

    @Test
    void aWriteThatWouldPassTheWorldCapIsRefusedAndChangesNothing() throws Exception {
        WorldBudget budget = new WorldBudget(200, 10_000);
        WorldState world = world("{\"gate\": {\"open\": false}}");
        world.limitTo(budget);
        List<WorldChange> heard = new java.util.ArrayList<>();
        world.addListener((w, change) -> heard.add(change));
        long version = world.version();

        WorldLimitException set = catchThrowableOfType(
                WorldLimitException.class, () -> world.set("log", json("\"" + "x".repeat(300) + "\"")));
        WorldLimitException merge = catchThrowableOfType(
                WorldLimitException.class, () -> world.merge("", json("{\"log\": [\"" + "y".repeat(300) + "\"]}")));

        for (WorldLimitException refused : List.of(set, merge)) {
            assertThat(refused.limit()).isEqualTo(200);
            assertThat(refused.total()).isFalse();
            assertThat(refused.getMessage()).contains("past its size cap of 200");
        }
        assertThat(set.path()).isEqualTo("log");
        assertThat(world.snapshot()).isEqualTo(json("{\"gate\": {\"open\": false}}"));
        assertThat(world.version()).isEqualTo(version);
        assertThat(heard).isEmpty();
        assertThat(budget.used()).isEqualTo(world.size());

        world.set("log", json("\"" + "x".repeat(100) + "\""));
        // Replacing a value counts what it replaces: the same size again fits although it is near the cap.
        world.set("log", json("\"" + "z".repeat(100) + "\""));
        assertThat(world.size()).isEqualTo(JsonSize.of(world.snapshot())).isLessThanOrEqualTo(200);
    }

    @Test
    void theTotalCapCountsEveryWorldUnderTheBudgetAndAReleasedOneNoLonger() throws Exception {
        WorldBudget budget = new WorldBudget(1_000, 500);
        WorldState first = world("{\"a\": \"" + "a".repeat(300) + "\"}");
        WorldState second = world("{}");
        first.limitTo(budget);
        second.limitTo(budget);

        WorldLimitException refused = catchThrowableOfType(
                WorldLimitException.class, () -> second.set("b", json("\"" + "b".repeat(300) + "\"")));
        assertThat(refused.total()).isTrue();
        assertThat(refused.limit()).isEqualTo(500);
        assertThat(refused.getMessage()).contains("all worlds together past their size cap of 500");
        assertThat(budget.used()).isEqualTo(first.size() + second.size());

        first.releaseBudget();
        assertThat(budget.used()).isEqualTo(second.size());
        second.set("b", json("\"" + "b".repeat(300) + "\""));
        assertThat(budget.used()).isEqualTo(second.size()).isEqualTo(JsonSize.of(second.snapshot()));
    }

    @Test
    void aStateAlreadyPastACapCannotBePutUnderTheBudget() {
        WorldBudget budget = new WorldBudget(50, 60);
        WorldLimitException refused = catchThrowableOfType(
                WorldLimitException.class,
                () -> world("{\"a\": \"" + "a".repeat(100) + "\"}").limitTo(budget));
        assertThat(refused.total()).isFalse();
        assertThat(budget.used()).isZero();
        assertThat(Json.write(json("{}"))).isEqualTo("{}");
    }
}
