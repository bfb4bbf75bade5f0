package dev.fencing.fence.store;

/** A fence store could not answer (database down, timeout): the request is refused with 503, never let through. */
public final class FenceStoreException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public FenceStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
