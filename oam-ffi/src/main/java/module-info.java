/** The Java side of the C ABI (libOpenAppleModelsFFI): the class its JNI code calls. */
module dev.oam.ffi {
    requires dev.oam.bridge;
    requires static org.jspecify;
}
