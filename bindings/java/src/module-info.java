/** tensorlife for Java: eager tensor math with scoped memory lifetimes, over the C library
 *  through JNI (carried in the jar).  The generated JNI layer, org.tensorlife.raw, stays inside. */
module org.tensorlife {
    exports org.tensorlife;
}
