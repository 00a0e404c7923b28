package dev.oam.core.schema;

/** A JSON Schema that cannot be used; {@code schemaPath} is a JSON pointer into it ({@code #/properties/x}). */
public final class SchemaException extends Exception {
    private final String schemaPath;

    public SchemaException(String schemaPath, String message) {
        super(message, null, false, false);
        this.schemaPath = schemaPath;
    }

    public String schemaPath() {
        return schemaPath;
    }
}
