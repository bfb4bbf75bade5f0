package dev.fencing.protocol;

/**
 * The Kafka record headers of the fencing contract (docs/DESIGN.md section 5): the agent adds them to every fenced
 * record it produces, the Kafka consumer fence reads them. The token is decimal ASCII, the other values UTF-8.
 */
public final class KafkaHeaderNames {
  /** The fencing token, decimal ASCII ({@link TokenGrammar}). */
  public static final String TOKEN = "fencing-token";
  /** The lock the token was issued for. */
  public static final String LOCK = "fencing-lock";
  /** HMAC-SHA256 of (lock, token), base64url ({@link TokenSignature}): sent when the agent has a signing key. */
  public static final String SIGNATURE = "fencing-signature";
  /** The id of the grant that issued the token, as {@link HttpHeaderNames#GRANT}. */
  public static final String GRANT = "fencing-grant";
  /**
   * The outbox event id of a record the outbox relay delivers ({@link OutboxSchema#EVENT_ID}): a consumer applies an
   * event once by it.
   */
  public static final String EVENT_ID = "fencing-event-id";

  private KafkaHeaderNames() {
  }
}
