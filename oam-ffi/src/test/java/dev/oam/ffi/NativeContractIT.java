package dev.oam.ffi;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.ProtocolContract;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The protocol contract through the C ABI: every line goes through {@code oam_bridge_send} of libOpenAppleModelsFFI in
 * a real C process that started its own JVM, and every message comes back through the callback.
 */
@ExtendWith(NativeContractIT.CAbiDifferences.class)
class NativeContractIT extends ProtocolContract {
    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        return NativeClient.start(flags);
    }

    /** The one case where the C ABI differs from a byte stream by design. */
    static final class CAbiDifferences implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return context.getTestMethod()
                    .filter(method -> method.getName().equals("invalidUtf8IsAParseError"))
                    .map(method ->
                            ConditionEvaluationResult.disabled("oam_bridge_send refuses bytes that are not UTF-8 "
                                    + "at once with OAM_ERROR_INVALID_UTF8 instead of answering -32700 (as the header says); "
                                    + "NativeLibraryIT.sendRefusesNullAndInvalidUtf8 checks that"))
                    .orElse(ConditionEvaluationResult.enabled("the same on every transport"));
        }
    }
}
