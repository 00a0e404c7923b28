package dev.oam.game.npc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
