package dev.fencing.agent.bootstrap;

import dev.fencing.protocol.HttpHeaderNames;

/**
 * What HTTP client advice (inlined into JDK and library classes) calls. Implemented by the agent core; java.base types
 * only.
 */
public interface HttpHook {
  /** Request header carrying the token (docs/DESIGN.md section 5). */
  String TOKEN_HEADER = HttpHeaderNames.TOKEN;
  /** Request header carrying the lock name. */
  String LOCK_HEADER = HttpHeaderNames.LOCK;
  /** Request header carrying the token's signature when fencing.signing.key-file is set (absent otherwise). */
  String SIGNATURE_HEADER = HttpHeaderNames.SIGNATURE;
  /**
   * Request header carrying the id of the grant that issued the token (the etcd lease id in lower-case hex), when the
   * decision has one ({@link Decision#grant()}): a fence tells two grants with the same token apart by it.
   */
  String GRANT_HEADER = HttpHeaderNames.GRANT;
  /** Response header a fence sets on a 409 for a stale token. */
  String REJECTED_HEADER = HttpHeaderNames.REJECTED;

  /**
   * Decides for one request to {@code scheme://host:port} ({@code port} -1: the scheme's default). Never null;
   * block decisions are turned into an IOException (sync) or a failed future (async) by the advice.
   */
  Decision decide(String method, String scheme, String host, int port);

  /**
   * A response: a 409 with {@code Fencing-Rejected: stale-token} or {@code replayed-token} is a rejection by a fence,
   * and counted.
   */
  void responded(int status, String rejectedHeader);

  /**
   * As {@link #responded(int, String)}, for a response read apart from the thread that sent its request (an
   * asynchronous client's I/O thread): the request went to {@code scheme://host:port} ({@code port} -1: the scheme's
   * default) carrying {@code lock}'s pair ({@code lock} null: no pair), which the refusal is attributed to.
   */
  default void responded(int status, String rejectedHeader, String lock, String scheme, String host, int port) {
    responded(status, rejectedHeader);
  }

  /** The JDK HttpClient's pending response: {@link #responded} once it completes (the future is not replaced). */
  void observe(java.util.concurrent.CompletableFuture<?> response);

  /** Before the core installs the real hook: the bridge's fallback (fail-mode) with the default unsafe methods. */
  HttpHook NOOP = new HttpHook() {
    @Override
    public Decision decide(String method, String scheme, String host, int port) {
      boolean safe = "GET".equals(method) || "HEAD".equals(method) || "OPTIONS".equals(method) || "TRACE".equals(method);
      return Fencing.decide(Channel.HTTP, !safe, false);
    }

    @Override
    public void responded(int status, String rejectedHeader) {}

    @Override
    public void responded(int status, String rejectedHeader, String lock, String scheme, String host, int port) {}

    @Override
    public void observe(java.util.concurrent.CompletableFuture<?> response) {}
  };
}
