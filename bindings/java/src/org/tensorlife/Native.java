package org.tensorlife;

import java.io.File;

/** Loads the JNI library once: -Dtensorlife.library=PATH, else the path the build recorded
 *  (BuildConfig), else java.library.path.  No LD_LIBRARY_PATH: the JNI library carries an
 *  rpath to libtensorlife. */
final class Native {
    private Native() {}

    static {
        String explicit = System.getProperty("tensorlife.library");
        if (explicit != null) {
            System.load(explicit);
        } else if (new File(BuildConfig.JNI_LIBRARY).isFile()) {
            System.load(BuildConfig.JNI_LIBRARY);
        } else {
            System.loadLibrary("tensorlife_jni");
        }
    }

    static void ensureLoaded() {}
}
