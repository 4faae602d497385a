package org.tensorlife;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Loads the JNI library once, the way ONNX Runtime and OR-Tools do:
 *  <ol>
 *  <li>-Dtensorlife.native.path=FILE: that library;</li>
 *  <li>else the copy carried in the jar, native/OS-ARCH/libtensorlife_jni.so, extracted to a
 *      private temporary file (deleted at exit) and loaded from there;</li>
 *  <li>else System.loadLibrary("tensorlife_jni") through java.library.path.</li>
 *  </ol>
 *  The JNI library has the C library linked in statically, so nothing else is looked for. */
final class Native {
    private Native() {}

    static final String PROPERTY = "tensorlife.native.path";

    static String platform() {
        String os = System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(java.util.Locale.ROOT);
        os = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "osx" : os.startsWith("windows") ? "windows" : os;
        arch = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch.equals("aarch64") ? "aarch64" : arch;
        return os + "-" + arch;
    }

    static {
        String explicit = System.getProperty(PROPERTY);
        if (explicit != null) {
            System.load(explicit);
        } else {
            String resource = "/native/" + platform() + "/" + System.mapLibraryName("tensorlife_jni");
            try (InputStream in = Native.class.getResourceAsStream(resource)) {
                if (in == null) {
                    System.loadLibrary("tensorlife_jni");
                } else {
                    Path dir = Files.createTempDirectory("tensorlife-jni");
                    Path lib = dir.resolve(System.mapLibraryName("tensorlife_jni"));
                    Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
                    lib.toFile().deleteOnExit();
                    dir.toFile().deleteOnExit();
                    System.load(lib.toAbsolutePath().toString());
                }
            } catch (IOException e) {
                throw new UnsatisfiedLinkError("tensorlife: could not extract " + resource + ": " + e);
            }
        }
    }

    static void ensureLoaded() {}
}
