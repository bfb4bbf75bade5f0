package dev.fencing.fence.kafka;

import dev.fencing.protocol.KafkaHeaderNames;
import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenGrammar;
import dev.fencing.protocol.TokenHeaders;
import dev.fencing.protocol.TokenSignature;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Reads a record's token (docs/DESIGN.md section 5) with the HTTP fence's rule ({@link TokenHeaders}), so that one
 * token means the same to every fence: one {@code fencing} header, {@code <token>;<lock>[;<grant>]}, whose token is 1
 * to 19 digits without sign or leading zero, 1 to 2^63-1, and whose lock is a guarded lock. The older form, one
 * {@code fencing-token} (decimal ASCII) and one {@code fencing-lock} (UTF-8) header with an optional
 * {@code fencing-grant}, is read with the same rule; a record carrying both forms is malformed, as is anything else
 * outside the grammar: a verdict, never a guess (a duplicated header could carry an old and a new token). Values are
 * decoded only up to a bound, so a huge header costs nothing.
 */
public final class FencingHeaders {

  /** Token, lock and grant in one value, {@code <token>;<lock>[;<grant>]} ({@link TokenGrammar#kafkaValue}). */
  public static final String FENCING = KafkaHeaderNames.FENCING;
  /** The older form's token header, read for records written by older agents and relays. */
  public static final String LEGACY_TOKEN = KafkaHeaderNames.LEGACY_TOKEN;
  /** The older form's lock header. */
  public static final String LEGACY_LOCK = KafkaHeaderNames.LEGACY_LOCK;
  /** The older form's grant header. */
  public static final String LEGACY_GRANT = KafkaHeaderNames.LEGACY_GRANT;
  /** HMAC-SHA256 of (lock, token), base64url: checked when the fence holds a signing key. */
  public static final String SIGNATURE = KafkaHeaderNames.SIGNATURE;
  /**
   * The outbox event id of a record the outbox relay delivered (1 to {@value #MAX_EVENT_ID} visible ASCII characters,
   * as the outbox's {@code event_id} column).
   */
  public static final String EVENT_ID = KafkaHeaderNames.EVENT_ID;
  static final int MAX_EVENT_ID = 64;
  /** A signature has 43 characters; longer values are bad without being decoded. */
  static final int MAX_SIGNATURE_BYTES = 64;
  /** Longer token values are malformed without being decoded (TokenHeaders' limit). */
  static final int MAX_TOKEN_BYTES = 64;
  /** Longer {@code fencing} values are malformed without being decoded: token, lock and grant at their longest. */
  static final int MAX_FENCING_BYTES = TokenGrammar.MAX_KAFKA_VALUE_LENGTH;
  /** Lock names have at most 128 characters: a longer value cannot name a guarded lock. */
  private static final int MAX_LOCK_BYTES = 4 * 128;
  private static final String FORM = "<token>;<lock>[;<grant>]";

  private FencingHeaders() {
  }

  /**
   * The verdict on a record's headers, with the signature checked when {@code key} is not null (a valid token without
   * a valid {@code fencing-signature} is then {@code missing_signature} or {@code bad_signature}).
   */
  public static TokenHeaders.Result read(Headers headers, Set<String> locks, TokenSignature key) {
    TokenHeaders.Result r = read(headers, locks);
    if (key == null || !r.isValid()) {
      return r;
    }
    List<String> signatures = values(headers, SIGNATURE, MAX_SIGNATURE_BYTES);
    TokenHeaders.Result v = TokenHeaders.verify(r, signatures, key);
    return v.isValid() ? v : new TokenHeaders.Result(v.lock(), v.token(), v.rejection(),
        v.detail().replace(TokenHeaders.SIGNATURE, SIGNATURE));
  }

  /**
   * The verdict on a record's headers: valid lock and token (with the record's grant, null when it has none), or a
   * rejection with its detail. A grant that is oversized, not visible ASCII, empty or repeated makes the token
   * malformed.
   */
  public static TokenHeaders.Result read(Headers headers, Set<String> locks) {
    Iterator<Header> fencing = headers.headers(FENCING).iterator();
    if (!fencing.hasNext()) {
      return readLegacy(headers, locks);
    }
    Header first = fencing.next();
    TokenHeaders.Result r = readFencing(first.value(), locks);
    if (fencing.hasNext()) {
      int n = 2;
      for (fencing.next(); fencing.hasNext(); fencing.next()) {
        n++;
      }
      return new TokenHeaders.Result(r.lock(), 0, Rejection.MALFORMED_TOKEN, n + " " + FENCING
          + " headers: send exactly one");
    }
    String legacy = legacyHeaderOn(headers);
    if (legacy != null) {
      return new TokenHeaders.Result(r.lock(), 0, Rejection.MALFORMED_TOKEN, "both a " + FENCING + " header and a "
          + legacy + " header of the older form: a record carries its token in one form (" + FENCING + ": "
          + FORM + ")");
    }
    return r;
  }

  /** One {@code fencing} value, {@code <token>;<lock>[;<grant>]}. */
  private static TokenHeaders.Result readFencing(byte[] value, Set<String> locks) {
    if (value != null && value.length > MAX_FENCING_BYTES) {
      return new TokenHeaders.Result(null, 0, Rejection.MALFORMED_TOKEN, "oversized " + FENCING + " header ("
          + value.length + " bytes): its value " + FORM + " has at most " + MAX_FENCING_BYTES + " characters");
    }
    String[] fields = TokenGrammar.kafkaFields(value == null ? "" : new String(value, StandardCharsets.UTF_8));
    if (fields[0].isEmpty() && fields[1] == null) {
      return new TokenHeaders.Result(null, 0, Rejection.MALFORMED_TOKEN, "empty " + FENCING + " header: its value "
          + "is " + FORM);
    }
    List<String> lock = fields[1] == null ? List.of() : List.of(fields[1]);
    int tokenBytes = tokenBytes(value);
    if (tokenBytes > MAX_TOKEN_BYTES) {
      TokenHeaders.Result lockOnly = TokenHeaders.parse(List.of("1"), lock, locks);
      return new TokenHeaders.Result(lockOnly.lock(), 0, Rejection.MALFORMED_TOKEN, "oversized token in the "
          + FENCING + " header (" + tokenBytes + " bytes): a token has at most " + TokenHeaders.MAX_DIGITS
          + " digits");
    }
    TokenHeaders.Result r = TokenHeaders.parse(List.of(fields[0]), lock, locks);
    if (r.isValid()) {
      r = TokenHeaders.grant(r, fields[2] == null ? null : List.of(fields[2]));
    }
    if (r.isValid()) {
      return r;
    }
    String detail = r.detail().replace(TokenHeaders.TOKEN + " header", "token in the " + FENCING + " header")
        .replace(TokenHeaders.GRANT + " header", "grant in the " + FENCING + " header")
        .replace(TokenHeaders.LOCK + " header", "lock in the " + FENCING + " header").replace("request", "record");
    if (fields[1] == null && r.rejection() == Rejection.UNKNOWN_LOCK) {
      detail += "; its value is " + FORM;
    }
    return new TokenHeaders.Result(r.lock(), r.token(), r.rejection(), detail);
  }

  /** Bytes before the first separator of a {@code fencing} value: the token's, bounded as the older form's header. */
  private static int tokenBytes(byte[] value) {
    for (int i = 0; i < value.length; i++) {
      if (value[i] == TokenGrammar.KAFKA_SEPARATOR) {
        return i;
      }
    }
    return value.length;
  }

  /** The name of a header of the older form on the record, or null. */
  private static String legacyHeaderOn(Headers headers) {
    for (String name : new String[] {LEGACY_TOKEN, LEGACY_LOCK, LEGACY_GRANT}) {
      if (headers.lastHeader(name) != null) {
        return name;
      }
    }
    return null;
  }

  /** The older form: {@code fencing-token}, {@code fencing-lock} and optionally {@code fencing-grant}. */
  private static TokenHeaders.Result readLegacy(Headers headers, Set<String> locks) {
    TokenHeaders.Result r = readToken(headers, locks);
    if (!r.isValid()) {
      return r;
    }
    List<String> grants = null;
    for (Header h : headers.headers(LEGACY_GRANT)) {
      if (grants == null) {
        grants = new ArrayList<>(1);
      }
      byte[] v = h.value();
      if (v != null && v.length > TokenHeaders.MAX_GRANT) {
        return new TokenHeaders.Result(r.lock(), r.token(), Rejection.MALFORMED_TOKEN, "oversized " + LEGACY_GRANT
            + " header (" + v.length + " bytes): a grant id has at most " + TokenHeaders.MAX_GRANT + " characters");
      }
      grants.add(v == null ? "" : new String(v, StandardCharsets.UTF_8));
    }
    TokenHeaders.Result g = TokenHeaders.grant(r, grants);
    return g.isValid() ? g : new TokenHeaders.Result(g.lock(), g.token(), g.rejection(),
        g.detail().replace(TokenHeaders.GRANT, LEGACY_GRANT));
  }

  /** A record's event id: {@code id} null when it carries none; {@code problem} non-null when the header is bad. */
  record EventId(String id, String problem) {
  }

  /** Reads {@value #EVENT_ID}: absent, exactly one well-formed value, or a problem (repeated, empty, too long, ...). */
  static EventId eventId(Headers headers) {
    String id = null;
    int n = 0;
    for (Header h : headers.headers(EVENT_ID)) {
      if (++n > 1) {
        return new EventId(null, "repeated " + EVENT_ID + " header: a record is one outbox event");
      }
      byte[] v = h.value();
      if (v == null || v.length == 0 || v.length > MAX_EVENT_ID) {
        return new EventId(null, (v == null || v.length == 0 ? "empty " : "oversized ") + EVENT_ID + " header: an "
            + "event id has 1 to " + MAX_EVENT_ID + " visible ASCII characters");
      }
      for (byte b : v) {
        if (b < 0x21 || b > 0x7e) {
          return new EventId(null, EVENT_ID + " header with a byte that is not visible ASCII (0x"
              + Integer.toHexString(b & 0xff) + "): an event id has 1 to " + MAX_EVENT_ID
              + " visible ASCII characters");
        }
      }
      id = new String(v, StandardCharsets.US_ASCII);
    }
    return new EventId(id, null);
  }

  private static TokenHeaders.Result readToken(Headers headers, Set<String> locks) {
    List<String> tokens = values(headers, LEGACY_TOKEN, MAX_TOKEN_BYTES);
    List<String> lockValues = values(headers, LEGACY_LOCK, MAX_LOCK_BYTES);
    int oversized = oversized(headers);
    if (oversized > 0 && tokens.size() == 1) {
      TokenHeaders.Result lockOnly = TokenHeaders.parse(List.of("1"), lockValues, locks);
      return new TokenHeaders.Result(lockOnly.lock(), 0, Rejection.MALFORMED_TOKEN, "oversized " + LEGACY_TOKEN
          + " header (" + oversized + " bytes): a token has at most " + TokenHeaders.MAX_DIGITS + " digits");
    }
    TokenHeaders.Result r = TokenHeaders.parse(tokens, lockValues, locks);
    if (r.isValid()) {
      return r;
    }
    // The shared parser words its details for HTTP; the record's header names are in lower case.
    String detail = r.detail().replace(TokenHeaders.TOKEN, LEGACY_TOKEN).replace(TokenHeaders.LOCK, LEGACY_LOCK)
        .replace("request", "record");
    return new TokenHeaders.Result(r.lock(), r.token(), r.rejection(), detail);
  }

  private static List<String> values(Headers headers, String name, int maxBytes) {
    List<String> out = null;
    for (Header h : headers.headers(name)) {
      if (out == null) {
        out = new ArrayList<>(1);
      }
      byte[] v = h.value();
      if (v == null) {
        out.add("");
      } else if (v.length > maxBytes) {
        out.add("");   // replaced by the oversized verdict (token) or matches no lock (lock)
      } else {
        out.add(new String(v, StandardCharsets.UTF_8));
      }
    }
    return out == null ? List.of() : out;
  }

  /** Byte length of an oversized token header, else 0. */
  private static int oversized(Headers headers) {
    for (Header h : headers.headers(LEGACY_TOKEN)) {
      byte[] v = h.value();
      if (v != null && v.length > MAX_TOKEN_BYTES) {
        return v.length;
      }
    }
    return 0;
  }
}
