package dev.fencing.protocol;

/**
 * The Kafka record headers of the fencing contract (docs/DESIGN.md section 5): the agent adds them to every fenced
 * record it produces, the Kafka consumer fence reads them. A record carries the token, its lock and its grant in one
 * header, {@link #FENCING}, whose value {@link TokenGrammar#kafkaValue} writes and {@link TokenGrammar#kafkaFields}
 * reads, and the signature, when there is one, in {@link #SIGNATURE}.
 */
public final class KafkaHeaderNames {
  /**
   * Token, lock and grant in one ASCII value, {@code <token>;<lock>} or {@code <token>;<lock>;<grant>}
   * ({@link TokenGrammar#kafkaValue}): one short key, so that each record pays for one header.
   */
  public static final String FENCING = "fencing";
  /** HMAC-SHA256 of (lock, token), base64url ({@link TokenSignature}): sent when the agent has a signing key. */
  public static final String SIGNATURE = "fencing-signature";
  /**
   * The older form's token header (decimal ASCII), beside {@link #LEGACY_LOCK} and {@link #LEGACY_GRANT} in place of
   * {@link #FENCING}: the fence and the agent's consumer propagation still read it; nothing writes it.
   */
  public static final String LEGACY_TOKEN = "fencing-token";
  /** The older form's lock header (UTF-8); read only, as {@link #LEGACY_TOKEN}. */
  public static final String LEGACY_LOCK = "fencing-lock";
  /** The older form's grant header (ASCII); read only, as {@link #LEGACY_TOKEN}. */
  public static final String LEGACY_GRANT = "fencing-grant";
  /**
   * The outbox event id of a record the outbox relay delivers ({@link OutboxSchema#EVENT_ID}): a consumer applies an
   * event once by it.
   */
  public static final String EVENT_ID = "fencing-event-id";

  private KafkaHeaderNames() {
  }
}
