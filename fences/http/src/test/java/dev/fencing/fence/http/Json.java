package dev.fencing.fence.http;

import java.util.LinkedHashMap;
import java.util.Map;

/** Reads a flat JSON object (strings, integers, booleans, null), enough for problem details; fails on anything else. */
final class Json {

  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  static Map<String, Object> object(String text) {
    Json j = new Json(text.trim());
    Map<String, Object> out = new LinkedHashMap<>();
    j.expect('{');
    if (j.peek() == '}') {
      j.i++;
      return j.end(out);
    }
    while (true) {
      String key = j.string();
      j.expect(':');
      out.put(key, j.value());
      char c = j.next();
      if (c == '}') {
        return j.end(out);
      }
      if (c != ',') {
        throw new IllegalArgumentException("expected , or } at " + j.i + " in " + text);
      }
    }
  }

  private Map<String, Object> end(Map<String, Object> out) {
    if (i != s.length()) {
      throw new IllegalArgumentException("trailing text at " + i + " in " + s);
    }
    return out;
  }

  private Object value() {
    char c = peek();
    if (c == '"') {
      return string();
    }
    for (String word : new String[] {"null", "true", "false"}) {
      if (s.startsWith(word, i)) {
        i += word.length();
        return word.equals("null") ? null : Boolean.valueOf(word);
      }
    }
    int start = i;
    if (c == '-') {
      i++;
    }
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    if (start == i) {
      throw new IllegalArgumentException("unexpected " + c + " at " + i + " in " + s);
    }
    return Long.parseLong(s.substring(start, i));
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    while (true) {
      char c = s.charAt(i++);
      if (c == '"') {
        return b.toString();
      }
      if (c == '\\') {
        char e = s.charAt(i++);
        switch (e) {
          case 'n':
            b.append('\n');
            break;
          case 't':
            b.append('\t');
            break;
          case 'u':
            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            i += 4;
            break;
          default:
            b.append(e);
        }
      } else {
        b.append(c);
      }
    }
  }

  private char peek() {
    skip();
    return s.charAt(i);
  }

  private char next() {
    skip();
    return s.charAt(i++);
  }

  private void expect(char c) {
    if (next() != c) {
      throw new IllegalArgumentException("expected " + c + " at " + (i - 1) + " in " + s);
    }
  }

  private void skip() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }
}
