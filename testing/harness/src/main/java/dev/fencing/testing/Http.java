package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Reads the agent's HTTP endpoints from tests. The agent's /status is a flat JSON object, so a small scanner is
 * enough and the harness needs no JSON library that could clash with the one shaded into the agent.
 */
public final class Http {

  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private Http() {
  }

  /** The body of a GET; any status other than 2xx throws with the status and body. */
  public static String get(String url) {
    HttpResponse<String> response = send(url);
    if (response.statusCode() / 100 != 2) {
      throw new IllegalStateException("GET " + url + " returned " + response.statusCode() + ": " + response.body());
    }
    return response.body();
  }

  /**
   * Polls {@code http://127.0.0.1:<port>/status} until its body contains {@code jsonSubstring} (for example
   * {@code "state":"HOLDING"}) and returns that body. Bodies of any status count, since a not-ready agent may
   * answer /status with an error code. While the agent is starting, refused connections are expected and retried.
   */
  public static String awaitStatus(int port, String jsonSubstring, Duration timeout) {
    String url = "http://127.0.0.1:" + port + "/status";
    long deadline = System.nanoTime() + timeout.toNanos();
    String lastBody = null;
    RuntimeException lastError = null;
    while (true) {
      try {
        HttpResponse<String> response = send(url);
        lastBody = response.statusCode() + " " + response.body();
        lastError = null;
        if (response.body().contains(jsonSubstring)) {
          return response.body();
        }
      } catch (RuntimeException e) {
        lastError = e;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("GET " + url + " did not contain " + jsonSubstring + " within " + timeout
            + "; last response: " + lastBody + (lastError == null ? "" : "; last error: " + lastError));
      }
      Processes.sleep(100);
    }
  }

  /**
   * The value of a top-level field of a flat JSON object: strings unquoted and unescaped, {@code null} as null,
   * numbers, booleans, arrays and objects as their raw text. A missing field throws, so a typo in a test cannot pass
   * as a null value.
   */
  public static String jsonField(String json, String field) {
    JsonScanner scanner = new JsonScanner(json);
    scanner.expect('{');
    if (scanner.peek() != '}') {
      while (true) {
        String key = scanner.string();
        scanner.expect(':');
        String value = scanner.value();
        if (key.equals(field)) {
          return value;
        }
        if (scanner.next() == '}') {
          break;
        }
        scanner.back();
        scanner.expect(',');
      }
    }
    throw new IllegalArgumentException("no field \"" + field + "\" in " + json);
  }

  private static HttpResponse<String> send(String url) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build();
    try {
      return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + url + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during GET " + url, e);
    }
  }

  /** Just enough of a JSON reader to walk the members of one object, skipping nested values as text. */
  private static final class JsonScanner {
    private final String text;
    private int pos;

    JsonScanner(String text) {
      this.text = text;
    }

    char peek() {
      while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
        pos++;
      }
      if (pos >= text.length()) {
        throw error("unexpected end");
      }
      return text.charAt(pos);
    }

    char next() {
      char c = peek();
      pos++;
      return c;
    }

    void back() {
      pos--;
    }

    void expect(char expected) {
      if (next() != expected) {
        back();
        throw error("expected '" + expected + "'");
      }
    }

    /** A value: a string unescaped, null as null, anything else as its raw text. */
    String value() {
      char c = peek();
      if (c == '"') {
        return string();
      }
      int start = pos;
      if (c == '{' || c == '[') {
        skipNested();
      } else {
        while (pos < text.length() && ",}] \t\r\n".indexOf(text.charAt(pos)) < 0) {
          pos++;
        }
      }
      String raw = text.substring(start, pos);
      return raw.equals("null") ? null : raw;
    }

    String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        if (pos >= text.length()) {
          throw error("unterminated string");
        }
        char c = text.charAt(pos++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char escaped = text.charAt(pos++);
        switch (escaped) {
          case 'n' -> out.append('\n');
          case 't' -> out.append('\t');
          case 'r' -> out.append('\r');
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'u' -> {
            out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
            pos += 4;
          }
          default -> out.append(escaped);
        }
      }
    }

    private void skipNested() {
      int depth = 0;
      do {
        char c = peek();
        if (c == '"') {
          string();
          continue;
        }
        pos++;
        if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          depth--;
        }
      } while (depth > 0);
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at " + pos + " in JSON: " + text);
    }
  }
}
