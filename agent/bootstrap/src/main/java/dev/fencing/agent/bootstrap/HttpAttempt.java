package dev.fencing.agent.bootstrap;

import java.util.concurrent.CompletableFuture;

/**
 * What every HTTP client advice does for one attempt, apart from reading the library's request and writing its
 * headers: ask the hook, turn a block into the {@link FencingBlockedException} the client's caller gets, count the
 * agent's own failures, report a fence's refusal coming back. Static, java.base types only: it is reached from advice
 * inlined into the library's classes.
 */
public final class HttpAttempt {
  private HttpAttempt() {}

  /**
   * The decision for one attempt to {@code scheme://host:port} ({@code port} -1: the scheme's default): a tag (set
   * its {@link Decision#httpHeaders()}) or a pass (whose header list is empty). Throws the block, so that the
   * attempt never reaches the network.
   */
  public static Decision decide(String method, String scheme, String host, int port) throws FencingBlockedException {
    Decision d = Fencing.http().decide(method, scheme, host, port);
    if (d.isBlock()) {
      throw new FencingBlockedException(Channel.HTTP, d);
    }
    return d;
  }

  /**
   * True when the attempt's request must lose a {@code Fencing-Grant} it may carry: a tag without a grant, on a request
   * that may be a copy of one tagged before (a retry, a redirect) whose grant is not this token's.
   */
  public static boolean dropsGrant(Decision d) {
    return d.isTag() && d.grant() == null;
  }

  /**
   * What advice does with anything thrown while it decided or tagged: the block is rethrown (the caller gets it), any
   * other error is the agent's and is counted and logged once per interval; the attempt then goes on untagged. Never
   * throws anything but the block.
   */
  public static void failed(Throwable t) throws FencingBlockedException {
    FencingBlockedException blocked = blocked(t);
    if (blocked != null) {
      throw blocked;
    }
  }

  /**
   * As {@link #failed}, for advice that hands the block to the library's callback rather than throwing it: the block,
   * or null after counting an agent error. Never throws.
   */
  public static FencingBlockedException blocked(Throwable t) {
    if (t instanceof FencingBlockedException) {
      return (FencingBlockedException) t;
    }
    try {
      Fencing.hookFailed(Channel.HTTP, false, t);
    } catch (Throwable unreachable) {
      // nothing left to count with: the attempt goes on regardless
    }
    return null;
  }

  /**
   * As {@link #blocked}, for advice that hands the block back as the failed future of an asynchronous send: that
   * future, or null after counting an agent error. Never throws.
   */
  public static CompletableFuture<?> failedFuture(Throwable t) {
    FencingBlockedException blocked = blocked(t);
    return blocked == null ? null : CompletableFuture.failedFuture(blocked);
  }

  /** A response to a tagged or passed attempt: a 409 with its {@code Fencing-Rejected} value goes to the hook. */
  public static void responded(int status, String rejectedHeader) {
    if (status == 409) {
      Fencing.http().responded(status, rejectedHeader);
    }
  }

  /**
   * As {@link #responded(int, String)}, for a response read on another thread than its request was decided on: the
   * request's target {@code scheme://host:port} and the lock of the pair it carried ({@code Fencing-Lock}; null when
   * none) go with it, so that the refusal is attributed to them rather than to whatever that thread sent last.
   */
  public static void responded(int status, String rejectedHeader, String lock, String scheme, String host, int port) {
    if (status == 409) {
      Fencing.http().responded(status, rejectedHeader, lock, scheme, host, port);
    }
  }
}
