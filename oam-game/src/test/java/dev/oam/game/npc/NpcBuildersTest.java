package dev.oam.game.npc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.agent.ToolChoice;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NpcBuildersTest {
    @Test
    void aPersonaBuilderStartsFromTheNameAlone() {
        Persona mira = Persona.builder("Mira")
                .role("innkeeper")
                .goals(List.of("keep the peace"))
                .maxSentences(3)
                .build();
        assertThat(mira)
                .isEqualTo(new Persona(
                        "Mira",
                        "innkeeper",
                        "",
                        "",
                        "",
                        List.of("keep the peace"),
                        List.of(),
                        List.of(),
                        Emotion.NEUTRAL,
                        3));
        assertThat(mira.toBuilder().build()).isEqualTo(mira);
        assertThatThrownBy(() -> Persona.builder("Mira").name(" ").build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void npcOptionsBuilderStartsFromTheDefaults() {
        Duration timeout = Duration.ofSeconds(30);
        NpcOptions options = NpcOptions.builder(timeout)
                .playerOptionCount(2)
                .rememberFact(true)
                .build();
        NpcOptions d = NpcOptions.defaults(timeout);
        assertThat(options.playerOptionCount()).isEqualTo(2);
        assertThat(options.rememberFact()).isTrue();
        assertThat(options)
                .usingRecursiveComparison()
                .ignoringFields("playerOptionCount", "rememberFact")
                .isEqualTo(d);
        assertThat(d.toBuilder().build()).isEqualTo(d);
    }

    /**
     * The defaults as docs/GAMES.md's option table states them, written out here apart from the code that sets them.
     */
    @Test
    void theDefaultsAreTheDocumentedOnes() {
        Duration timeout = Duration.ofSeconds(120);
        NpcOptions d = NpcOptions.defaults(timeout);
        assertThat(d.replyFormat()).isEqualTo(ReplyFormat.AUTOMATIC);
        assertThat(d.groundingTool()).isNull();
        assertThat(d.toolChoice()).isEqualTo(ToolChoice.EXPLICIT);
        assertThat(d.maxToolRounds()).isEqualTo(2);
        assertThat(d.maxToolCalls()).isEqualTo(6);
        assertThat(d.toolTimeout()).isEqualTo(timeout);
        assertThat(d.worldReadable()).containsExactly("");
        assertThat(d.worldWritable()).isEmpty();
        assertThat(d.worldContextPaths()).isEmpty();
        assertThat(d.rememberFact()).isFalse();
        assertThat(d.changeRelationship()).isFalse();
        assertThat(d.maxFacts()).isEqualTo(12);
        assertThat(d.maxRelationshipChange()).isEqualTo(10);
        assertThat(d.secretsUnlockAtRelationship()).isEqualTo(50);
        assertThat(d.emotions()).containsExactly(Emotion.values()).hasSize(16);
        assertThat(d.playerOptionCount()).isEqualTo(3);
        assertThat(d.canEndConversation()).isTrue();
        assertThat(d.extraInstructions()).isNull();
        assertThat(d.compactAfterTurns()).isEqualTo(8);
        assertThat(d.keepRecentTurns()).isEqualTo(2);
        assertThat(d.fallbackOnGuardrail()).isTrue();
        assertThat(d.fallbackLines()).isEmpty();
        assertThat(d.fallbackPool()).hasSize(3);
        assertThat(d.temperature()).isNull();
        assertThat(d.maximumResponseTokens()).isNull();
        assertThat(d.barkMaximumTokens()).isEqualTo(48);
        assertThat(d.sampling()).isNull();
    }
}
