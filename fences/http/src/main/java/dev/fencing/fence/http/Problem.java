package dev.fencing.fence.http;

import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenHeaders;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An RFC 9457 problem detail for a refused request (docs/DESIGN.md section 5): type, title, status, detail, lock, token,
 * currentToken. All seven fields are always present, null where unknown (a malformed token has no value, a missing
 * lock no current token), so that clients parse one shape. Tokens are JSON numbers, as in the agent's /status.
 */
public record Problem(Rejection rejection, String detail, String lock, Long token, Long currentToken) {

  public static final String CONTENT_TYPE = "application/problem+json";

  public int status() {
    return rejection.status();
  }

  /**
   * The response headers besides the body: the content type, {@code Fencing-Rejected} for a verdict on the token (the
   * agent counts it), {@code Retry-After} for a 503, and no caching.
   */
  public Map<String, String> headers() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("Content-Type", CONTENT_TYPE);
    if (rejection.header() != null) {
      h.put(TokenHeaders.REJECTED, rejection.header());
    }
    if (rejection.status() == 503) {
      h.put("Retry-After", "1");
    }
    h.put("Cache-Control", "no-store");
    return h;
  }

  public String json() {
    StringBuilder b = new StringBuilder(256).append('{');
    string(b.append("\"type\":"), rejection.type());
    string(b.append(",\"title\":"), rejection.title());
    b.append(",\"status\":").append(rejection.status());
    string(b.append(",\"detail\":"), detail);
    string(b.append(",\"lock\":"), lock);
    b.append(",\"token\":").append(token);
    b.append(",\"currentToken\":").append(currentToken);
    return b.append('}').toString();
  }

  private static void string(StringBuilder b, String s) {
    if (s == null) {
      b.append("null");
      return;
    }
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    b.append('"');
  }
}
