package dev.fencing.protocol;

/**
 * The grammar of what the agent sends and every fence reads (docs/DESIGN.md section 5): a token is a decimal int64
 * from 1 to 2^63-1 without sign or blanks (the fences' strict reading, {@link TokenHeaders}, also refuses a leading
 * zero and names what is wrong); a lock name is 1 to {@value #MAX_LOCK_LENGTH} of
 * {@code [A-Za-z0-9._-]}; a grant id is 1 to {@value #MAX_GRANT_LENGTH} visible ASCII characters; a signature is 43
 * characters of base64url ({@link TokenSignature}). These checks run on the agent's hot path (inlined advice reaches
 * them through the bootstrap part): no allocation, java.base only. The Kafka header's value ({@link #kafkaValue},
 * {@link #kafkaFields}) is the one rule that allocates: it is built once per grant and split once per record read.
 */
public final class TokenGrammar {
  /** Longest lock name accepted (the agent's own lock names are limited the same way). */
  public static final int MAX_LOCK_LENGTH = 128;
  /** Longest grant id carried (the fences refuse longer ones as malformed). */
  public static final int MAX_GRANT_LENGTH = 64;
  /** Digits of the largest token, 2^63-1. */
  public static final int MAX_TOKEN_DIGITS = 19;
  /**
   * Separates the fields of the Kafka header {@link KafkaHeaderNames#FENCING}: neither a token nor a lock name can
   * contain it; a grant can, which is why the grant comes last.
   */
  public static final char KAFKA_SEPARATOR = ';';
  /** Longest value of the Kafka header {@link KafkaHeaderNames#FENCING}: token, lock and grant at their longest. */
  public static final int MAX_KAFKA_VALUE_LENGTH = MAX_TOKEN_DIGITS + 1 + MAX_LOCK_LENGTH + 1 + MAX_GRANT_LENGTH;

  private TokenGrammar() {
  }

  /** A decimal int64 above 0 with no sign, spaces or leading '+'; -1 for anything else. */
  public static long parseToken(String text) {
    if (text == null) {
      return -1;
    }
    int n = text.length();
    if (n == 0 || n > MAX_TOKEN_DIGITS) {
      return -1;
    }
    long value = 0;
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      int digit = c - '0';
      if (value > (Long.MAX_VALUE - digit) / 10) {
        return -1; // above 2^63-1
      }
      value = value * 10 + digit;
    }
    return value > 0 ? value : -1;
  }

  /** 43 characters of base64url: the shape of a signature (HMAC-SHA256, no padding); header-safe. */
  public static boolean wellFormedSignature(String s) {
    if (s == null || s.length() != TokenSignature.SIGNATURE_CHARS) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /** 1 to 64 visible ASCII characters (0x21 to 0x7e): the shape of a grant id the fences accept; header-safe. */
  public static boolean wellFormedGrant(String g) {
    if (g == null || g.isEmpty() || g.length() > MAX_GRANT_LENGTH) {
      return false;
    }
    for (int i = 0; i < g.length(); i++) {
      char c = g.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  /** The lock-name rule of fencing.lock: 1..128 of [A-Za-z0-9._-]. */
  public static boolean validLock(String lock) {
    if (lock == null || lock.isEmpty() || lock.length() > MAX_LOCK_LENGTH) {
      return false;
    }
    for (int i = 0; i < lock.length(); i++) {
      char c = lock.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
          || c == '-';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /**
   * The value of the Kafka header {@link KafkaHeaderNames#FENCING}: {@code <token>;<lock>} or, with a grant,
   * {@code <token>;<lock>;<grant>} (ASCII). Built once per grant by its writers, not per record.
   *
   * @throws IllegalArgumentException for a token below 1, a lock name outside {@link #validLock} (which also keeps
   *     ';' out of it) or a grant outside {@link #wellFormedGrant}: values a fence would refuse
   */
  public static String kafkaValue(long token, String lock, String grant) {
    if (token <= 0) {
      throw new IllegalArgumentException("token " + token + " cannot be carried: tokens are 1 to " + Long.MAX_VALUE);
    }
    if (!validLock(lock)) {
      throw new IllegalArgumentException("lock name '" + lock + "' cannot be carried: a lock name is 1 to "
          + MAX_LOCK_LENGTH + " of [A-Za-z0-9._-]");
    }
    if (grant != null && !wellFormedGrant(grant)) {
      throw new IllegalArgumentException("grant id '" + grant + "' cannot be carried: a grant id is 1 to "
          + MAX_GRANT_LENGTH + " visible ASCII characters");
    }
    String pair = Long.toString(token) + KAFKA_SEPARATOR + lock;
    return grant == null ? pair : pair + KAFKA_SEPARATOR + grant;
  }

  /**
   * The fields of a {@link KafkaHeaderNames#FENCING} value, unchecked: {token, lock, grant}, the token up to the first
   * ';', the lock up to the next, the grant the rest (it may contain ';'); lock null when there is no ';', grant null
   * when there is no second one. Whether each field is well formed is the reader's rule ({@link #parseToken},
   * {@link #validLock}, {@link #wellFormedGrant}; the fences' strict reading {@link TokenHeaders}).
   */
  public static String[] kafkaFields(String value) {
    int first = value.indexOf(KAFKA_SEPARATOR);
    if (first < 0) {
      return new String[] {value, null, null};
    }
    int second = value.indexOf(KAFKA_SEPARATOR, first + 1);
    if (second < 0) {
      return new String[] {value.substring(0, first), value.substring(first + 1), null};
    }
    return new String[] {value.substring(0, first), value.substring(first + 1, second), value.substring(second + 1)};
  }
}
