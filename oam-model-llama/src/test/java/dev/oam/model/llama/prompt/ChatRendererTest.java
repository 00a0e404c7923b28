package dev.oam.model.llama.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The renderer on Jinja templates written here, rendered in Java ({@link ChatTemplate}); the real families against
 * llama.cpp's server are {@link ChatTemplateGoldenTest}.
 */
class ChatRendererTest {
    /** {@code [INST]}-like: BOS text first, no system role (raises), no tool role (raises). */
    private static final String TAGGED = """
            {{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}\
            {% elif m['role'] == 'tool' %}{{ raise_exception('tool role not supported') }}{% endif %}\
            <{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}""";

    private static final String CHATML =
            "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
                    + " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    private static ChatRenderer renderer(String template) {
        return new ChatRenderer(new ChatTemplate(template, "<s>", "</s>", false));
    }

    private static ChatMessage m(String role, String content) {
        return new ChatMessage(role, content);
    }

    @Test
    void noTemplateMeansChatMl() {
        ChatRenderer renderer = new ChatRenderer(null);
        assertThat(renderer.render(List.of(m("system", "s"), m("user", "u"), m("tool", "t"))))
                .isEqualTo(
                        "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>tool\nt<|im_end|>\n"
                                + "<|im_start|>assistant\n");
    }

    @Test
    void contentsAreDataTheTemplateNeverInterprets() {
        String content =
                "{{ raise_exception('x') }} {% if true %}y{% endif %} {# c #} 😀🐉 𝄞 </user> \"q\" \\n \u0019\u000e\u0000\u007f";
        ChatRenderer renderer = renderer(CHATML);
        List<ChatMessage> chat = List.of(
                m("system", "be brief"), m("user", content), m("assistant", "{{ messages }}"), m("user", "and?"));
        assertThat(renderer.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
        assertThat(renderer.failures()).isEmpty();
        assertThat(renderer.usesTemplate()).isTrue();
    }

    @Test
    void aTemplateWithoutSystemRoleGetsTheSystemTextInTheFirstUserTurnAndToolsAsUserTurns() {
        ChatRenderer renderer = renderer(TAGGED);
        assertThat(renderer.render(List.of(
                        m("system", "be brief"),
                        m("user", "hi"),
                        m("assistant", "ok"),
                        m("tool", "42"),
                        m("user", "and?"))))
                .isEqualTo("<s><user>be brief\nhi</user><assistant>ok</assistant><user>42\n\nand?</user><assistant>");
        assertThat(renderer.render(List.of(m("user", "hi")))).isEqualTo("<s><user>hi</user><assistant>");
        assertThat(renderer.failures()).isEmpty();
    }

    @Test
    void aTemplateThatRendersTheToolRoleKeepsIt() {
        ChatRenderer renderer = renderer(CHATML);
        List<ChatMessage> chat =
                List.of(m("user", "U"), m("assistant", "A"), m("tool", "{\"gold\": 3}"), m("user", "ok"));
        assertThat(renderer.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
    }

    @Test
    void aTemplateThatRaisesOrCannotBeParsedFallsBackToChatMlNamingTheReason() {
        List<ChatMessage> chat = List.of(m("user", "U"));
        ChatRenderer raising = renderer("{{ raise_exception('Conversation roles must alternate') }}");
        assertThat(raising.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
        assertThat(raising.failures()).singleElement().asString().contains("Conversation roles must alternate");
        assertThat(raising.problem()).contains("raised an exception").contains("Conversation roles must alternate");
        assertThat(raising.usesTemplate()).isFalse();

        ChatRenderer broken = renderer("{% for m in messages %}{{ m.content }");
        assertThat(broken.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
        assertThat(broken.problem()).isNotNull();

        ChatRenderer unknown = renderer("{{ messages[0].content.zfill(3) }}");
        assertThat(unknown.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
        assertThat(unknown.problem()).contains("zfill");
    }

    @Test
    void theAssistantAtEitherEndGoesToTheTemplateAsItIs() {
        ChatRenderer renderer = renderer(TAGGED);
        assertThat(renderer.render(List.of(m("user", "U"), m("assistant", "A"))))
                .isEqualTo("<s><user>U</user><assistant>A</assistant><assistant>");
    }

    @Test
    void pythonStringAndDictMethodsNamespacesSlicesAndDatesWork() throws Exception {
        String template = """
                {%- set ns = namespace(n=0, seen=false) -%}
                {%- for m in messages[1:] -%}
                {%- set ns.n = ns.n + 1 -%}
                {%- if m.content.strip().startswith('Hi') and m.content.endswith(('x', '!  ')) %}[{{ loop.index }}:{{ m.content.strip().upper() }}]{% endif -%}
                {%- if loop.first %}F{% endif %}{% if loop.last %}L{% endif -%}
                {%- endfor -%}
                |{{ ns.n }}|{{ messages[0].content.lstrip('-').rstrip() }}|{{ 'a,b,,c'.split(',') | length }}|{{ ' x  y '.split() | join('+') }}
                |{{ 'Hello'.lower() }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'the end'.title() }}|{{ none_such is defined }}|{{ messages[0] | tojson }}
                {%- for k, v in {'k': 'v'}.items() %}|{{ k }}={{ v }}{% endfor %}|{{ strftime_now('%Y-%m-%d') }}|{{ messages[0].content | trim }}""";
        ChatRenderer renderer = renderer(template);
        String out = renderer.render(List.of(m("system", "--sys  "), m("user", "  Hi there!  "), m("assistant", "no")));
        String today = LocalDate.now().toString();
        assertThat(out)
                .isIn(
                        "[1:HI THERE!]FL|2|sys|4|x+y\n|hello|bba|The End|false|{\"role\": \"system\", \"content\": \"--sys  \"}|k=v|"
                                + today + "|--sys",
                        "[1:HI THERE!]FL|2|sys|4|x+y\n|hello|bba|The End|false|{\"role\":\"system\",\"content\":\"--sys  \"}|k=v|"
                                + today + "|--sys");
        assertThat(renderer.failures()).isEmpty();
    }

    @Test
    void aLeadingBosTextIsCutWhenTheTokenizerAddsBosItself() throws Exception {
        List<ChatMessage> chat = List.of(m("user", "hi"));
        assertThat(new ChatRenderer(new ChatTemplate("{{ bos_token }}[{{ messages[0].content }}]", "<s>", "</s>", true))
                        .render(chat))
                .isEqualTo("[hi]");
        assertThat(new ChatRenderer(
                                new ChatTemplate("{{ bos_token }}[{{ messages[0].content }}]", "<s>", "</s>", false))
                        .render(chat))
                .isEqualTo("<s>[hi]");
    }

    @Test
    void normalisationTurnsToolsIntoUserTurnsAndJoinsRepeats() {
        assertThat(ChatRenderer.normalise(List.of(m("system", "S"), m("system", "T"), m("user", "U"), m("tool", "X"))))
                .containsExactly(m("system", "S"), m("user", "T\n\nU\n\nX"));
        assertThat(ChatRenderer.normalise(List.of(m("assistant", "A"), m("user", "U"))))
                .isNull();
        assertThat(ChatRenderer.normalise(List.of(m("system", "S")))).isNull();
    }
}
