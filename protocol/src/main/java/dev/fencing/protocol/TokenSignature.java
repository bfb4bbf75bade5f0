package dev.fencing.protocol;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed tokens: HMAC-SHA256 over {@code "fencing-v1:" + lock + ":" + token} (decimal), sent as base64url without
 * padding (43 characters) beside the token. Lock names cannot contain ':', so the encoding is unambiguous. The agent
 * signs once per grant; fences holding the same key refuse a token whose signature is missing or wrong before they
 * touch their store, so a forged or corrupted huge token cannot poison the fence.
 *
 * <p>Key file: the first line holds the key in base64 (standard or URL alphabet, padding optional), at least 32 bytes
 * once decoded ({@code openssl rand -base64 32 > fencing.key}). Shared by the agent and every fence, so both sides read
 * the same file the same way. The key never appears in messages or {@link #toString()}.
 */
public final class TokenSignature {

  /** Shortest key accepted, in bytes (the HMAC-SHA256 output size). */
  public static final int MIN_KEY_BYTES = 32;
  /** Length of a signature's text: base64url of 32 bytes, no padding. */
  public static final int SIGNATURE_CHARS = 43;
  /** What a key file must hold, for error messages. */
  public static final String EXPECTED_FORM = "a file whose first line is a base64 key of at least " + MIN_KEY_BYTES
      + " bytes (e.g. openssl rand -base64 32 > fencing.key)";

  private static final String ALGORITHM = "HmacSHA256";
  private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

  private final SecretKeySpec key;
  private final String origin;

  private TokenSignature(byte[] key, String origin) {
    this.key = new SecretKeySpec(key, ALGORITHM);
    this.origin = origin;
  }

  /** A key from its raw bytes (tests, and callers that keep keys elsewhere). */
  public static TokenSignature of(byte[] key) {
    if (key == null || key.length < MIN_KEY_BYTES) {
      throw new IllegalArgumentException("signing key too short: " + (key == null ? 0 : key.length)
          + " bytes, expected at least " + MIN_KEY_BYTES);
    }
    return new TokenSignature(key.clone(), "(key of " + key.length + " bytes)");
  }

  /**
   * Reads a key file. Throws IllegalArgumentException naming the path, what is wrong and the expected form (never the
   * key's content).
   */
  public static TokenSignature load(Path file) {
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(file + " is a directory: expected " + EXPECTED_FORM);
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + " (" + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "): expected " + EXPECTED_FORM);
    }
    String text = lines.isEmpty() ? "" : lines.get(0).strip();
    if (text.isEmpty()) {
      throw new IllegalArgumentException(file + " is empty: expected " + EXPECTED_FORM);
    }
    byte[] key;
    try {
      String normal = text.replace('-', '+').replace('_', '/');
      key = Base64.getDecoder().decode(normal);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + " does not hold base64 (" + e.getMessage() + "): expected "
          + EXPECTED_FORM);
    }
    if (key.length < MIN_KEY_BYTES) {
      throw new IllegalArgumentException(file + " holds a key of " + key.length + " bytes, too short: expected "
          + EXPECTED_FORM);
    }
    return new TokenSignature(key, file.toString());
  }

  /** The canonical bytes signed for (lock, token). */
  static byte[] message(String lock, long token) {
    return ("fencing-v1:" + lock + ":" + token).getBytes(StandardCharsets.UTF_8);
  }

  /** The signature of (lock, token): 43 characters of base64url. */
  public String sign(String lock, long token) {
    return ENCODER.encodeToString(mac(lock, token));
  }

  /**
   * Whether {@code signature} is the signature of (lock, token). Anything that is not 43 base64url characters is
   * false; the comparison of the MAC takes the same time wherever the bytes differ.
   */
  public boolean verify(String lock, long token, String signature) {
    if (signature == null || signature.length() != SIGNATURE_CHARS || !base64Url(signature)) {
      return false;
    }
    byte[] given;
    try {
      given = Base64.getUrlDecoder().decode(signature);
    } catch (IllegalArgumentException e) {
      return false; // e.g. trailing bits set in the last character: not what sign() makes
    }
    byte[] expected = mac(lock, token);
    if (!ENCODER.encodeToString(given).equals(signature)) {
      return false; // non-canonical encoding of the same bytes
    }
    return MessageDigest.isEqual(expected, given);
  }

  private byte[] mac(String lock, long token) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return mac.doFinal(message(lock, token));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }

  private static boolean base64Url(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /** Where the key came from (the file), never the key. */
  @Override
  public String toString() {
    return origin;
  }
}
