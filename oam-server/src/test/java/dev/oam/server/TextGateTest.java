package dev.oam.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.ScriptedModel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TextGateTest {
    private final List<String> sent = new ArrayList<>();
    private int cuts;

    private TextGate gate(List<String> stops, Integer maxTokens) {
        // The scripted model counts a token per four UTF-8 bytes.
        return new TextGate(
                stops,
                maxTokens,
                new ScriptedModel(List.of(), ScriptedModel.DEFAULT_FALLBACK),
                sent::add,
                () -> cuts++);
    }

    @Test
    void aStopSequenceSplitAcrossDeltasIsHeldBackThenCut() {
        TextGate gate = gate(List.of("END"), null);
        gate.append("The EN");
        assertThat(sent).containsExactly("The ");
        gate.append("D of it");
        gate.finish("The END of it");
        assertThat(gate.text()).isEqualTo("The ");
        assertThat(gate.cut()).isEqualTo(TextGate.Cut.STOP);
        assertThat(sent).containsExactly("The ");
        assertThat(cuts).isEqualTo(1);
    }

    @Test
    void heldTextThatTurnsOutNotToBeAStopIsReleased() {
        TextGate gate = gate(List.of("END", "STOP"), null);
        gate.append("to the E");
        gate.append("nd ST");
        assertThat(String.join("", sent)).isEqualTo("to the End ");
        gate.finish("to the End ST");
        assertThat(String.join("", sent)).isEqualTo("to the End ST");
        assertThat(gate.cut()).isEqualTo(TextGate.Cut.NONE);
        assertThat(cuts).isZero();
    }

    @Test
    void theEarliestOfSeveralStopsWins() {
        TextGate gate = gate(List.of("cold", "north"), null);
        gate.append("The road north is long and cold");
        assertThat(gate.text()).isEqualTo("The road ");
    }

    @Test
    void theTokenLimitCutsAtTheLongestPrefixThatFits() {
        TextGate gate = gate(List.of(), 2);
        gate.append("abcdef");
        assertThat(gate.cut()).isEqualTo(TextGate.Cut.NONE);
        gate.append("ghijkl");
        assertThat(gate.text()).isEqualTo("abcdefgh");
        assertThat(gate.cut()).isEqualTo(TextGate.Cut.LENGTH);
        gate.append("more");
        assertThat(String.join("", sent)).isEqualTo("abcdefgh");
        assertThat(cuts).isEqualTo(1);
    }

    @Test
    void aResetThatContinuesTheTextIsFollowed() {
        TextGate gate = gate(List.of(), null);
        gate.append("Hello");
        gate.reset("Hello there");
        gate.finish("Hello there");
        assertThat(gate.text()).isEqualTo("Hello there");
        assertThat(sent).containsExactly("Hello", " there");
    }
}
