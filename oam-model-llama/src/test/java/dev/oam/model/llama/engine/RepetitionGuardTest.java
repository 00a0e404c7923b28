package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.CancellationToken;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A plain answer that loops is stopped, and keeps what came before the loop; a call is never stopped so. */
class RepetitionGuardTest {
    @Test
    void aLoopStopsTheGenerationAndTheTextBeforeItIsKept() {
        CancellationToken stop = CancellationToken.create();
        List<String> seen = new ArrayList<>();
        RepetitionGuard guard = new RepetitionGuard(seen::add, stop);
        guard.accept("The gate is open. ");
        for (int i = 0; i < 5 && !guard.tripped(); i++) {
            guard.accept("that is a tool_call ");
        }
        assertThat(guard.tripped()).isTrue();
        assertThat(stop.isCancelled()).isTrue();
        assertThat(guard.kept()).isEqualTo("The gate is open.");
        int before = seen.size();
        guard.accept("more");
        assertThat(seen).as("nothing passes once stopped").hasSize(before);
    }

    @Test
    void wordsWithoutALoopAndCallsPass() {
        CancellationToken stop = CancellationToken.create();
        RepetitionGuard words = new RepetitionGuard(d -> {}, stop);
        words.accept("Welcome, traveller. The stew is two coins, the bread one. Sit by the fire.");
        assertThat(words.tripped()).isFalse();
        RepetitionGuard call = new RepetitionGuard(d -> {}, stop);
        call.accept("{\"tool_call\": {\"name\": \"say\", \"arguments\": {\"line\": \"");
        for (int i = 0; i < 6; i++) {
            call.accept("la la ");
        }
        assertThat(call.tripped())
                .as("a call's grammar closes it, the guard leaves it")
                .isFalse();
        assertThat(stop.isCancelled()).isFalse();
        assertThat(RepetitionGuard.repeatedUnit("ab ab ab ")).isZero(); // units of fewer than 4 characters are words
        assertThat(RepetitionGuard.repeatedUnit("I am glad. I am glad. I am glad. "))
                .isEqualTo("I am glad. ".length());
    }
}
