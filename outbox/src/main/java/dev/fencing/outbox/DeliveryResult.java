package dev.fencing.outbox;

/** What one delivery attempt came to, and the error the row keeps when it failed. */
record DeliveryResult(Kind kind, String error) {

  enum Kind {
    /** The destination accepted the event (HTTP 2xx, Kafka acknowledged by all in-sync replicas). */
    DELIVERED,
    /** A failure another attempt may not have: retried after a backoff until the attempts run out. */
    FAILED,
    /** A fence refused the row's token ({@code 409} with {@code Fencing-Rejected}): it never will accept it. */
    REJECTED,
    /** The row cannot be delivered as written (a malformed URL or header, an unknown channel). */
    INVALID
  }

  static final DeliveryResult DELIVERED = new DeliveryResult(Kind.DELIVERED, null);

  static DeliveryResult failed(String error) {
    return new DeliveryResult(Kind.FAILED, error);
  }

  static DeliveryResult rejected(String error) {
    return new DeliveryResult(Kind.REJECTED, error);
  }

  static DeliveryResult invalid(String error) {
    return new DeliveryResult(Kind.INVALID, error);
  }
}
