package org.tensorlife;

import org.tensorlife.raw.tensorlife;

/** A failed tensorlife call: the library's status and its message (tl_last_error). */
public class TensorLifeException extends RuntimeException {
    private final int status;

    TensorLifeException(int status, String message) {
        super(tensorlife.tlb_status_string(status) + ": " + message);
        this.status = status;
    }

    /** The tl_status code (negative). */
    public int status() { return status; }

    /** The exception for a status: StorageClosedException for TL_E_STORAGE_CLOSED, and so on. */
    static TensorLifeException of(int status, String message) {
        if (status == tensorlife.E_STORAGE_CLOSED) return new StorageClosedException(status, message);
        if (status == tensorlife.E_INVALID_HANDLE) return new InvalidHandleException(status, message);
        if (status == tensorlife.E_INVALID_ARGUMENT) return new InvalidArgumentException(status, message);
        if (status == tensorlife.E_SHAPE) return new ShapeException(status, message);
        if (status == tensorlife.E_DTYPE) return new DtypeException(status, message);
        return new TensorLifeException(status, message);
    }

    /** Throws when a call failed; reads the message on the calling thread, where it was set. */
    static void check(int status) {
        if (status != tensorlife.OK) throw of(status, tensorlife.tlb_last_error());
    }

    /** A tensor used after its scope was reset or closed; the message names the storage. */
    public static class StorageClosedException extends TensorLifeException {
        StorageClosedException(int s, String m) { super(s, m); }
    }

    /** A handle never issued, freed, of another context, or of a closed Context/Scope. */
    public static class InvalidHandleException extends TensorLifeException {
        InvalidHandleException(int s, String m) { super(s, m); }
    }

    public static class InvalidArgumentException extends TensorLifeException {
        InvalidArgumentException(int s, String m) { super(s, m); }
    }

    public static class ShapeException extends TensorLifeException {
        ShapeException(int s, String m) { super(s, m); }
    }

    public static class DtypeException extends TensorLifeException {
        DtypeException(int s, String m) { super(s, m); }
    }
}
