package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.SlotEngine;
import java.lang.reflect.Method;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.BeforeEach;

/** Every {@link JniEngineTest} again, on the FFM engine (skipped where FFM cannot run: JDK 21, Windows). */
class FfmEngineTest extends JniEngineTest {
    @Override
    EngineChoice.Kind kind() {
        return EngineChoice.Kind.FFM;
    }

    @BeforeEach
    @Override
    void open() {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        super.open();
    }

    @org.junit.jupiter.api.Test
    void theVocabularyForJavaGrammarsHasEveryTokensBytesAndFlagsControlTokens() throws Exception {
        SlotEngine engine = TinyEngines.chatMl(kind());
        Method vocabulary = engine.getClass().getDeclaredMethod("vocabulary");
        vocabulary.setAccessible(true);
        dev.oam.model.llama.grammar.TokenVocabulary v =
                (dev.oam.model.llama.grammar.TokenVocabulary) vocabulary.invoke(engine);
        int[] tokens = engine.promptTokens("<|im_start|>user\nthe goblin<|im_end|>");
        StringBuilder text = new StringBuilder();
        int control = 0;
        for (int t : tokens) {
            if (v.isControl(t)) {
                control++;
            } else {
                text.append(new String(v.piece(t), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        assertThat(control).isGreaterThanOrEqualTo(2);
        assertThat(text.toString()).isEqualTo("user\nthe goblin");
        assertThat(v.size()).isGreaterThan(1000);
    }

    /**
     * The FFM engine counts the tokens really held: the whole first prompt, then as much of the answer as the sampled
     * tokens share with the answer's canonical tokens (a grammar lets a model spell the text in other pieces), never
     * the last sampled token.
     */
    @Override
    void assertCachedAfterAnswer(EngineResult second, int firstPromptTokens, int answerTokens) {
        assertThat(second.cachedInputTokens()).isBetween(firstPromptTokens, firstPromptTokens + answerTokens - 1);
    }

    /** Blocks the process's decode thread with a task until closed (the FFM engine has no gate: it is that thread). */
    @Override
    AutoCloseable holdCompute() throws Exception {
        return holdDecodeThread();
    }

    /** Blocks the process's decode thread with a task until closed: requests admitted meanwhile start together. */
    static AutoCloseable holdDecodeThread() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Class<?> loopType = Class.forName("dev.oam.model.llama.ffm.DecodeLoop");
        Method get = loopType.getDeclaredMethod("get");
        get.setAccessible(true);
        Object loop = get.invoke(null);
        Method call = loopType.getDeclaredMethod("call", Callable.class);
        call.setAccessible(true);
        Callable<Object> block = () -> {
            entered.countDown();
            release.await();
            return null;
        };
        CompletableFuture<Object> held = CompletableFuture.supplyAsync(() -> {
            try {
                return call.invoke(loop, block);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
        entered.await();
        return () -> {
            release.countDown();
            held.join();
        };
    }
}
