package dev.fencing.agent.instrumentation.jdbc;

/**
 * Read or write, from the SQL text: a cheap scan of the first keyword. Anything not recognised as a read is a write
 * (DESIGN.md section 4), so an unknown statement is fenced rather than let through. Transaction control and session
 * statements are neither: they are never blocked, and they carry no token.
 */
public final class SqlClassifier {
  /** What a statement is, for the policy. */
  public enum Kind { READ, WRITE, CONTROL }

  private SqlClassifier() {}

  public static boolean isWrite(String sql) {
    return classify(sql) == Kind.WRITE;
  }

  public static Kind classify(String sql) {
    if (sql == null) {
      return Kind.WRITE;
    }
    int i = skipNoise(sql, 0);
    String word = keyword(sql, i);
    switch (word) {
      case "SELECT":
        // SELECT ... INTO new_table creates a table (PostgreSQL, H2); SELECT ... INTO @var / variables is MySQL-only
        // and harmless, but rare enough to treat the whole form as a write.
        return containsWord(sql, i, "INTO") ? Kind.WRITE : Kind.READ;
      case "SHOW":
      case "DESCRIBE":
      case "DESC":
      case "VALUES":
      case "TABLE":
        return Kind.READ;
      case "EXPLAIN":
        return containsWord(sql, i, "ANALYZE") ? Kind.WRITE : Kind.READ; // EXPLAIN ANALYZE executes the statement
      case "WITH":
        // A CTE is a read unless one of its parts modifies data.
        return containsWord(sql, i, "INSERT") || containsWord(sql, i, "UPDATE") || containsWord(sql, i, "DELETE")
            || containsWord(sql, i, "MERGE") ? Kind.WRITE : Kind.READ;
      case "BEGIN":
      case "START":
      case "COMMIT":
      case "END":
      case "ROLLBACK":
      case "SAVEPOINT":
      case "RELEASE":
      case "SET":
      case "RESET":
      case "USE":
        return Kind.CONTROL;
      default:
        return Kind.WRITE;
    }
  }

  /** Skips whitespace, comments ({@code --}, {@code /* *}{@code /}) and opening parentheses. */
  static int skipNoise(String s, int i) {
    int n = s.length();
    while (i < n) {
      char c = s.charAt(i);
      if (Character.isWhitespace(c) || c == '(') {
        i++;
      } else if (c == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
        int eol = s.indexOf('\n', i);
        i = eol < 0 ? n : eol + 1;
      } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
        int end = s.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
      } else {
        break;
      }
    }
    return i;
  }

  private static String keyword(String s, int i) {
    int end = i;
    while (end < s.length() && Character.isLetter(s.charAt(end)) && end - i < 16) {
      end++;
    }
    return s.substring(i, end).toUpperCase(java.util.Locale.ROOT);
  }

  /** A whole word anywhere after {@code from}, ignoring case (string literals are not parsed: errs toward write). */
  static boolean containsWord(String s, int from, String word) {
    int n = s.length();
    int w = word.length();
    for (int i = from; i + w <= n; i++) {
      if (s.regionMatches(true, i, word, 0, w)
          && (i == 0 || !Character.isLetterOrDigit(s.charAt(i - 1)) && s.charAt(i - 1) != '_')
          && (i + w == n || !Character.isLetterOrDigit(s.charAt(i + w)) && s.charAt(i + w) != '_')) {
        return true;
      }
    }
    return false;
  }
}
