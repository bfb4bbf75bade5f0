package dev.fencing.protocol;

/**
 * The tokened outbox's table, as the SQL installer creates it and the relay reads it (docs/DESIGN.md section 5,
 * "Tokened outbox"). The table name is the deployment's ({@code sql install --outbox <table>}); its columns, states and
 * channels are these. An application writes {@link #CHANNEL}, {@link #TARGET}, {@link #PAYLOAD} and optionally
 * {@link #METHOD}, {@link #MESSAGE_KEY}, {@link #HEADERS}; the database fills the rest.
 */
public final class OutboxSchema {
  /** Primary key, a UUID string the database generates unless the application gives one: the idempotency key. */
  public static final String EVENT_ID = "event_id";
  /** The lock of the writing session, filled by the insert trigger from the session values. */
  public static final String LOCK = "lock_name";
  /** The token of the writing session (bigint), filled by the insert trigger; the fence checked it. */
  public static final String TOKEN = "token";
  /** The grant id of the writing session (NULL when it has none), filled by the insert trigger. */
  public static final String GRANT = "grant_id";
  /** {@link #CHANNEL_HTTP} or {@link #CHANNEL_KAFKA}. */
  public static final String CHANNEL = "channel";
  /** HTTP: the absolute http(s) URL; Kafka: the topic. */
  public static final String TARGET = "target";
  /** HTTP method (default POST); NULL for Kafka. */
  public static final String METHOD = "method";
  /** Kafka: the record key (NULL: none); HTTP: optional. With channel and target, the ordering key. */
  public static final String MESSAGE_KEY = "message_key";
  /** Extra headers, one {@code Name: value} per line (NULL: none). */
  public static final String HEADERS = "headers";
  /** The body (HTTP) or record value (Kafka), text (UTF-8 on the wire). */
  public static final String PAYLOAD = "payload";
  /** The ordering key the insert trigger derives from channel, target and message key. */
  public static final String ORDER_KEY = "order_key";
  /** Position of the event among its ordering key's events, assigned in commit order by the insert trigger. */
  public static final String KEY_SEQ = "key_seq";
  /** {@link #PENDING}, {@link #DELIVERED} or {@link #PARKED}. */
  public static final String STATE = "state";
  /** Delivery attempts made so far. */
  public static final String ATTEMPTS = "attempts";
  /** Not before this time (database clock) is the next attempt made. */
  public static final String NEXT_ATTEMPT_AT = "next_attempt_at";
  /** When the event was written (database clock). */
  public static final String CREATED_AT = "created_at";
  /** When the event was delivered (database clock). */
  public static final String DELIVERED_AT = "delivered_at";
  /** The last failed attempt's error, cut to 1024 characters. */
  public static final String LAST_ERROR = "last_error";
  /** The relay that claimed the event (NULL: unclaimed). */
  public static final String CLAIMED_BY = "claimed_by";
  /** The claim holds until this time (database clock); after it another relay may claim the event. */
  public static final String CLAIMED_UNTIL = "claimed_until";
  /**
   * Token, lock and grant as the Kafka header {@link KafkaHeaderNames#FENCING} carries them
   * ({@link TokenGrammar#kafkaValue}), filled by the insert trigger, for a change-data-capture router that places one
   * column per header. NULL on events written before an earlier release's outbox was re-installed.
   */
  public static final String FENCING = "fencing";

  public static final String PENDING = "pending";
  public static final String DELIVERED = "delivered";
  public static final String PARKED = "parked";

  public static final String CHANNEL_HTTP = "http";
  public static final String CHANNEL_KAFKA = "kafka";

  private OutboxSchema() {
  }
}
