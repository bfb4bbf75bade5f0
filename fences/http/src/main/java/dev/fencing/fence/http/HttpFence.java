package dev.fencing.fence.http;

import dev.fencing.fence.store.FencePolicy;
import dev.fencing.fence.store.FenceStore;
import dev.fencing.fence.store.Verdict;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenHeaders;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The decision both filters share, free of any server API: is the request fenced, are its token headers valid, does
 * the store accept the token, and may its handler run yet. Refusals are counted in {@link FenceMetrics}.
 *
 * <p>An accepted request holds its place in the lock's {@link InFlightGate} until {@link Decision#release}: the first
 * request with a higher token waits (up to the policy's drain timeout) for the requests admitted with lower tokens in
 * this JVM to finish, and lower tokens are refused from the moment a higher one is accepted. Requests with the token
 * in force never wait for each other. With several service instances over a {@link JdbcFenceStore}, the store orders
 * tokens across instances but the wait covers only this JVM's requests.
 */
public final class HttpFence {

  private static final System.Logger LOG = System.getLogger(HttpFence.class.getName());

  private final FencePolicy policy;
  private final FenceStore store;
  private final FenceMetrics metrics;
  private final Map<String, InFlightGate> gates = new LinkedHashMap<>();

  /** A fence with its own metrics ({@link #metrics()}). */
  public HttpFence(FencePolicy policy, FenceStore store) {
    this(policy, store, new FenceMetrics("http", policy.locks()));
  }

  public HttpFence(FencePolicy policy, FenceStore store, FenceMetrics metrics) {
    this.policy = policy;
    this.store = store;
    this.metrics = metrics;
    for (String lock : policy.locks()) {
      gates.put(lock, new InFlightGate());
    }
  }

  public FencePolicy policy() {
    return policy;
  }

  public FenceStore store() {
    return store;
  }

  public FenceMetrics metrics() {
    return metrics;
  }

  /**
   * Decides on one request from its method, path and the values of each fencing header (one element per header line,
   * null when absent). May block: for the first request of a new token, until older requests have drained.
   */
  public Decision decide(String method, String path, List<String> tokenValues, List<String> lockValues) {
    return decide(method, path, tokenValues, lockValues, null);
  }

  /**
   * As {@link #decide(String, String, List, List)}, with the values of {@code Fencing-Signature}: with a signing key
   * in the policy, a token without a valid signature is refused before the store or the gate is touched.
   */
  public Decision decide(String method, String path, List<String> tokenValues, List<String> lockValues,
      List<String> signatureValues) {
    return decide(method, path, tokenValues, lockValues, signatureValues, null);
  }

  /**
   * As {@link #decide(String, String, List, List, List)}, with the values of {@code Fencing-Grant}: a token that
   * advances the fence stores its grant, and an equal token from another grant (or without one while one is stored)
   * is refused as replayed (409 {@code replayed-token}). A malformed grant is a malformed token (400).
   */
  public Decision decide(String method, String path, List<String> tokenValues, List<String> lockValues,
      List<String> signatureValues, List<String> grantValues) {
    if (!policy.fences(method, path)) {
      return Decision.PASS;
    }
    TokenHeaders.Result headers = TokenHeaders.verify(TokenHeaders.grant(
        TokenHeaders.parse(tokenValues, lockValues, policy.locks()), grantValues), signatureValues,
        policy.signingKey());
    if (!headers.isValid()) {
      if (headers.rejection() == Rejection.MISSING_TOKEN && policy.permissive()) {
        return Decision.PASS;
      }
      return reject(headers.rejection(), headers.detail(), headers.lock(),
          headers.token() == 0 ? null : headers.token(), null);
    }
    String lock = headers.lock();
    long token = headers.token();
    InFlightGate gate = gates.get(lock);
    long local = gate.token();
    if (token < local || (policy.strict() && token == local)) {
      return stale(lock, token, local);
    }
    Verdict verdict;
    try {
      verdict = store.check(lock, token, headers.grant(), policy.strict());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "fencing: the fence store failed to check token " + token + " for lock '" + lock
          + "'; refusing the request with 503", e);
      return reject(Rejection.STORE_UNAVAILABLE, "the fence store could not check the token; retry later", lock,
          token, null);
    }
    if (verdict.outcome() == Verdict.Outcome.REPLAYED) {
      return replayed(lock, token, headers.grant());
    }
    if (!verdict.isAccepted()) {
      return stale(lock, token, verdict.current());
    }
    InFlightGate.Epoch epoch = gate.enter(token);
    if (epoch == null) {
      return stale(lock, token, gate.token());
    }
    if (!epoch.ready.isDone()) {
      Rejection failed = awaitOlderRequests(epoch);
      if (failed != null) {
        epoch.exit();
        return reject(failed, "requests with tokens below " + token + " for lock '" + lock + "' are still running "
            + "after " + policy.drainTimeout().toMillis() + " ms; retry later", lock, token, null);
      }
    }
    return Decision.admit(epoch, lock, token);
  }

  /** Null once the older requests have finished, else why the wait ended. */
  private Rejection awaitOlderRequests(InFlightGate.Epoch epoch) {
    try {
      epoch.ready.get(policy.drainTimeout().toNanos(), TimeUnit.NANOSECONDS);
      return null;
    } catch (TimeoutException e) {
      LOG.log(Level.WARNING, "fencing: token " + epoch.token + " waited " + policy.drainTimeout().toMillis()
          + " ms for older requests to finish; refusing it with 503");
      return Rejection.DRAIN_TIMEOUT;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Rejection.DRAIN_TIMEOUT;
    } catch (ExecutionException e) {
      throw new IllegalStateException("a drain future never fails", e);
    }
  }

  private Decision stale(String lock, long token, long current) {
    String detail = token < current
        ? "token " + token + " for lock '" + lock + "' is lower than the fence token " + current
            + ": a newer lock holder has been here, this request comes from a stale one"
        : "token " + token + " for lock '" + lock + "' is not above the fence token " + current
            + " (strict mode: every request needs a new token)";
    return reject(Rejection.STALE_TOKEN, detail, lock, token, current);
  }

  private Decision replayed(String lock, long token, String grant) {
    return reject(Rejection.REPLAYED_TOKEN, "token " + token + " for lock '" + lock + "' was issued to another grant "
        + "than this request's (" + (grant == null ? "none" : TokenHeaders.quote(grant)) + "): the fence holds it for "
        + "the grant that advanced it; a coordinator restored from a snapshot gave the same token to a second holder",
        lock, token, (Long) token);
  }

  private Decision reject(Rejection rejection, String detail, String lock, Long token, Long current) {
    metrics.increment(lock, rejection);
    return Decision.reject(new Problem(rejection, detail, lock, token, current));
  }
}
