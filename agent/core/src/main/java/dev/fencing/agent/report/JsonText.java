package dev.fencing.agent.report;

import dev.fencing.agent.status.StatusJson;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the agent's own /status document: objects as {@link LinkedHashMap}, arrays as
 * {@link List}, strings, numbers as {@link Long} or {@link Double}, booleans and null. Errors name the position.
 */
public final class JsonText {
  private final String s;
  private int i;

  private JsonText(String s) {
    this.s = s;
  }

  /** Parses {@code text}; throws {@link IllegalArgumentException} saying where and what was expected. */
  public static Object parse(String text) {
    JsonText p = new JsonText(text);
    p.space();
    Object v = p.value();
    p.space();
    if (p.i != text.length()) {
      throw p.error("end of the document");
    }
    return v;
  }

  private IllegalArgumentException error(String expected) {
    String near = s.substring(i, Math.min(s.length(), i + 20));
    return new IllegalArgumentException("not JSON: expected " + expected + " at character " + i
        + (near.isEmpty() ? " (end of input)" : " near '" + near + "'"));
  }

  private void space() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private Object value() {
    if (i >= s.length()) {
      throw error("a value");
    }
    char c = s.charAt(i);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return word("true", Boolean.TRUE);
      case 'f':
        return word("false", Boolean.FALSE);
      case 'n':
        return word("null", null);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          return number();
        }
        throw error("a value");
    }
  }

  private Object word(String w, Object v) {
    if (!s.startsWith(w, i)) {
      throw error("'" + w + "'");
    }
    i += w.length();
    return v;
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    space();
    if (i < s.length() && s.charAt(i) == '}') {
      i++;
      return m;
    }
    for (;;) {
      space();
      if (i >= s.length() || s.charAt(i) != '"') {
        throw error("a field name");
      }
      String k = string();
      space();
      if (i >= s.length() || s.charAt(i) != ':') {
        throw error("':'");
      }
      i++;
      space();
      m.put(k, value());
      space();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
      } else if (i < s.length() && s.charAt(i) == '}') {
        i++;
        return m;
      } else {
        throw error("',' or '}'");
      }
    }
  }

  private List<Object> array() {
    List<Object> a = new ArrayList<>();
    i++;
    space();
    if (i < s.length() && s.charAt(i) == ']') {
      i++;
      return a;
    }
    for (;;) {
      space();
      a.add(value());
      space();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
      } else if (i < s.length() && s.charAt(i) == ']') {
        i++;
        return a;
      } else {
        throw error("',' or ']'");
      }
    }
  }

  private String string() {
    StringBuilder b = new StringBuilder();
    i++;
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '"') {
        return b.toString();
      }
      if (c == '\\') {
        if (i >= s.length()) {
          break;
        }
        char e = s.charAt(i++);
        switch (e) {
          case 'n':
            b.append('\n');
            break;
          case 't':
            b.append('\t');
            break;
          case 'r':
            b.append('\r');
            break;
          case 'b':
            b.append('\b');
            break;
          case 'f':
            b.append('\f');
            break;
          case 'u':
            if (i + 4 > s.length()) {
              throw error("four hex digits");
            }
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
    throw error("'\"' closing the string");
  }

  private Object number() {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
    String n = s.substring(start, i);
    try {
      return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n)
          : (Object) Long.parseLong(n);
    } catch (NumberFormatException e) {
      i = start;
      throw error("a number");
    }
  }

  /** Writes {@code v} as a JSON string literal, escaped as the status document is. */
  public static void quote(StringBuilder sb, String v) {
    StatusJson.string(sb, v);
  }
}
