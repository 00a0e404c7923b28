package dev.oam.testing.contract;

/** The schema the structured-output parts answer with: a decision between fighting and fleeing. */
final class Schemas {
    static final String DECISION_SCHEMA = """
            {"type":"object","properties":{"reasoning":{"type":"string"},"choice":{"type":"string","enum":["fight","flee"]},
             "confidence":{"type":"integer","minimum":0,"maximum":100}},"required":["reasoning","choice"]}""".replace("\n", "");

    private Schemas() {}
}
