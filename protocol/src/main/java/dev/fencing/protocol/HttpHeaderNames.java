package dev.fencing.protocol;

/**
 * The HTTP headers of the fencing contract (docs/DESIGN.md section 5): the agent sets the request headers on every
 * fenced request, the HTTP fence reads them and answers a refusal with {@link #REJECTED}. Header names are
 * case-insensitive on the wire; these are the spellings the agent sends.
 */
public final class HttpHeaderNames {
  /** The fencing token, decimal ({@link TokenGrammar}). */
  public static final String TOKEN = "Fencing-Token";
  /** The lock the token was issued for. */
  public static final String LOCK = "Fencing-Lock";
  /**
   * HMAC-SHA256 of (lock, token) in base64url ({@link TokenSignature}), sent when the agent has a signing key
   * (fencing.signing.key-file); checked by fences that hold the key.
   */
  public static final String SIGNATURE = "Fencing-Signature";
  /**
   * The id of the grant that issued the token (the agent sends the etcd lease id in lower-case hex): a fence tells two
   * grants with the same token apart by it.
   */
  public static final String GRANT = "Fencing-Grant";
  /**
   * The outbox event id of a request the outbox relay delivers ({@link OutboxSchema#EVENT_ID}): a receiver applies an
   * event once by it.
   */
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  /** Response header of a verdict against the token (409, 428, 403, 400): {@link Rejection#header()}. */
  public static final String REJECTED = "Fencing-Rejected";

  private HttpHeaderNames() {
  }
}
