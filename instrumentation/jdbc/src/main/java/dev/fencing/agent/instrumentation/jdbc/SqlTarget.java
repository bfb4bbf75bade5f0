package dev.fencing.agent.instrumentation.jdbc;

/**
 * The one table a write statement targets, from its text, so that the hook can tell whether a fence judges it: after
 * the lease's deadline only writes that a fence judges may still be sent (with the last token), everything else is
 * blocked. Found only for the plain forms whose target a fence trigger sees: {@code INSERT [INTO] t},
 * {@code REPLACE [INTO] t}, {@code UPDATE [ONLY] t}, {@code DELETE FROM [ONLY] t}, {@code MERGE INTO t},
 * {@code TRUNCATE [TABLE] [ONLY] t} (a single table; only where the dialect's fence fires on TRUNCATE),
 * {@code COPY t [(columns)] FROM ...}. Anything else (CTEs, multi-table forms such as MySQL's
 * {@code UPDATE a JOIN b ... SET b.x = ...}, which may write only the other table, DDL, CALL, several statements in one
 * text) has no known target: it counts as a write to an unfenced table.
 *
 * <p>The result is packed into a long of positions within the text (no allocation on the statement path):
 * name start, name end, schema start, schema end (15 bits each; schema start = end when the name is unqualified) and
 * two bits saying whether the schema and the name were quoted. {@link #NONE} when there is no known target.
 */
final class SqlTarget {
  static final long NONE = -1;
  /** Positions are 15 bits: longer statements have no known target. */
  static final int MAX_LENGTH = 0x7FFF;

  private SqlTarget() {}

  /** The target of {@code sql}, or {@link #NONE}. {@code truncateFenced}: the dialect's fence fires on TRUNCATE. */
  static long find(String sql, boolean truncateFenced) {
    if (sql == null || sql.length() > MAX_LENGTH) {
      return NONE;
    }
    int i = SqlClassifier.skipNoise(sql, 0);
    int n = sql.length();
    if (i >= n || hasSecondStatement(sql, i)) {
      return NONE;
    }
    boolean update = false;
    switch (sql.charAt(i) | 0x20) {
      case 'i':
        if (!keyword(sql, i, "INSERT")) {
          return NONE;
        }
        i = skipWords(sql, after(sql, i, "INSERT"), "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE");
        i = optional(sql, i, "INTO");
        break;
      case 'r':
        if (!keyword(sql, i, "REPLACE")) {
          return NONE;
        }
        i = skipWords(sql, after(sql, i, "REPLACE"), "LOW_PRIORITY", "DELAYED");
        i = optional(sql, i, "INTO");
        break;
      case 'u':
        if (!keyword(sql, i, "UPDATE")) {
          return NONE;
        }
        update = true;
        i = skipWords(sql, after(sql, i, "UPDATE"), "LOW_PRIORITY", "IGNORE", "ONLY");
        break;
      case 'd':
        if (!keyword(sql, i, "DELETE")) {
          return NONE;
        }
        i = skipWords(sql, after(sql, i, "DELETE"), "LOW_PRIORITY", "QUICK", "IGNORE");
        if (!keyword(sql, i, "FROM")) {
          return NONE; // MariaDB's multi-table DELETE t1, t2 FROM ...
        }
        i = skipWords(sql, after(sql, i, "FROM"), "ONLY");
        break;
      case 'm':
        if (!keyword(sql, i, "MERGE")) {
          return NONE;
        }
        i = after(sql, i, "MERGE");
        if (!keyword(sql, i, "INTO")) {
          return NONE;
        }
        i = after(sql, i, "INTO");
        break;
      case 'c':
        // COPY t [(columns)] FROM ...: fires t's INSERT triggers (PostgreSQL). COPY ... TO writes nothing.
        if (!keyword(sql, i, "COPY") || !SqlClassifier.containsWord(sql, i, "FROM")
            || SqlClassifier.containsWord(sql, i, "TO")) {
          return NONE;
        }
        i = after(sql, i, "COPY");
        break;
      case 't':
        if (!truncateFenced || !keyword(sql, i, "TRUNCATE")) {
          return NONE;
        }
        i = optional(sql, after(sql, i, "TRUNCATE"), "TABLE");
        i = skipWords(sql, i, "ONLY");
        break;
      default:
        return NONE;
    }
    // [schema.]name
    long first = identifier(sql, i);
    if (first == NONE) {
      return NONE;
    }
    int firstStart = (int) (first >>> 32) & 0xFFFF;
    int firstEnd = (int) first & 0xFFFF;
    boolean firstQuoted = (first & (1L << 48)) != 0;
    int next = firstEnd + (firstQuoted ? 1 : 0);
    int schemaStart = firstStart;
    int schemaEnd = firstStart;
    boolean schemaQuoted = false;
    int nameStart = firstStart;
    int nameEnd = firstEnd;
    boolean nameQuoted = firstQuoted;
    if (next < n && sql.charAt(next) == '.') {
      long second = identifier(sql, next + 1);
      if (second == NONE) {
        return NONE;
      }
      schemaStart = firstStart;
      schemaEnd = firstEnd;
      schemaQuoted = firstQuoted;
      nameStart = (int) (second >>> 32) & 0xFFFF;
      nameEnd = (int) second & 0xFFFF;
      nameQuoted = (second & (1L << 48)) != 0;
      next = nameEnd + (nameQuoted ? 1 : 0);
      if (next < n && sql.charAt(next) == '.') {
        return NONE; // catalog.schema.table: not a form the fences are matched against
      }
    }
    // Another table in the same statement (UPDATE a, b / TRUNCATE a, b) is a target this scan cannot judge.
    int after = skipSpace(sql, next);
    if (after < n && sql.charAt(after) == ',') {
      return NONE;
    }
    // UPDATE t [[AS] alias] SET only: a join (UPDATE a JOIN b ... SET b.x = ...) may write the other table alone.
    if (update && !setFollows(sql, after)) {
      return NONE;
    }
    return pack(nameStart, nameEnd, schemaStart, schemaEnd, schemaQuoted, nameQuoted);
  }

  static long pack(int nameStart, int nameEnd, int schemaStart, int schemaEnd, boolean schemaQuoted,
      boolean nameQuoted) {
    return (long) nameStart | (long) nameEnd << 15 | (long) schemaStart << 30 | (long) schemaEnd << 45
        | (schemaQuoted ? 1L << 60 : 0) | (nameQuoted ? 1L << 61 : 0);
  }

  static int nameStart(long t) {
    return (int) (t & MAX_LENGTH);
  }

  static int nameEnd(long t) {
    return (int) (t >>> 15 & MAX_LENGTH);
  }

  static int schemaStart(long t) {
    return (int) (t >>> 30 & MAX_LENGTH);
  }

  static int schemaEnd(long t) {
    return (int) (t >>> 45 & MAX_LENGTH);
  }

  static boolean qualified(long t) {
    return schemaEnd(t) > schemaStart(t);
  }

  static boolean schemaQuoted(long t) {
    return (t & 1L << 60) != 0;
  }

  static boolean nameQuoted(long t) {
    return (t & 1L << 61) != 0;
  }

  /** For tests and log lines: the target as text, e.g. {@code "public"."cell"} or {@code cell}; "none" for NONE. */
  static String describe(String sql, long t) {
    if (t == NONE) {
      return "none";
    }
    String name = sql.substring(nameStart(t), nameEnd(t));
    name = nameQuoted(t) ? "\"" + name + "\"" : name;
    if (!qualified(t)) {
      return name;
    }
    String schema = sql.substring(schemaStart(t), schemaEnd(t));
    return (schemaQuoted(t) ? "\"" + schema + "\"" : schema) + "." + name;
  }

  /**
   * A SQL identifier at {@code i} (after spaces): unquoted ({@code [A-Za-z_][A-Za-z0-9_$]*}) or quoted with
   * {@code "} or a backtick, without doubled quotes inside. Returns start and end of the name (inside the quotes)
   * and a quoted flag in bit 48, or NONE.
   */
  private static long identifier(String s, int i) {
    int n = s.length();
    i = skipSpace(s, i);
    if (i >= n) {
      return NONE;
    }
    char c = s.charAt(i);
    if (c == '"' || c == '`') {
      int end = s.indexOf(c, i + 1);
      if (end <= i + 1 || end + 1 < n && s.charAt(end + 1) == c) {
        return NONE; // empty, unterminated, or with a doubled quote inside: not matched
      }
      return (long) (i + 1) << 32 | end | 1L << 48;
    }
    if (!(Character.isLetter(c) || c == '_')) {
      return NONE;
    }
    int j = i + 1;
    while (j < n && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_' || s.charAt(j) == '$')) {
      j++;
    }
    return (long) i << 32 | j;
  }

  /** Whether the text holds another statement after a semicolon (outside quotes and comments). */
  static boolean hasSecondStatement(String s, int from) {
    int semi = s.indexOf(';', from);
    if (semi < 0) {
      return false; // the usual case: one indexOf, no scan
    }
    int n = s.length();
    for (int i = from; i < n; i++) {
      int end = SqlClassifier.endOfQuoteOrComment(s, i, false);
      if (end < 0) {
        return true; // unterminated: cannot tell, so not one plain statement
      }
      char c = s.charAt(i);
      if (end != i) {
        i = end;
      } else if (c == '$') {
        return true; // dollar quoting (PostgreSQL): not scanned, so not one plain statement
      } else if (c == ';') {
        return SqlClassifier.skipNoise(s, i + 1) < n && !onlySemicolons(s, i + 1);
      }
    }
    return false;
  }

  private static boolean onlySemicolons(String s, int i) {
    int n = s.length();
    for (int j = SqlClassifier.skipNoise(s, i); j < n; j = SqlClassifier.skipNoise(s, j + 1)) {
      if (s.charAt(j) != ';') {
        return false;
      }
    }
    return true;
  }

  /** {@code SET} at {@code i}, or after one alias ({@code [AS] x}) there. */
  private static boolean setFollows(String s, int i) {
    if (keyword(s, i, "SET")) {
      return true;
    }
    int alias = optional(s, i, "AS");
    long name = identifier(s, alias);
    if (name == NONE) {
      return false;
    }
    // A join keyword read as an alias (UPDATE a JOIN b ...) is followed by a table, never by SET.
    int end = (int) name & 0xFFFF;
    return keyword(s, skipSpace(s, end + ((name & (1L << 48)) != 0 ? 1 : 0)), "SET");
  }

  private static boolean keyword(String s, int i, String word) {
    int end = i + word.length();
    return end <= s.length() && s.regionMatches(true, i, word, 0, word.length())
        && (end == s.length() || !(Character.isLetterOrDigit(s.charAt(end)) || s.charAt(end) == '_'));
  }

  private static int after(String s, int i, String word) {
    return skipSpace(s, i + word.length());
  }

  private static int optional(String s, int i, String word) {
    return keyword(s, i, word) ? after(s, i, word) : i;
  }

  private static int skipWords(String s, int i, String... words) {
    boolean moved = true;
    while (moved) {
      moved = false;
      for (String w : words) {
        if (keyword(s, i, w)) {
          i = after(s, i, w);
          moved = true;
        }
      }
    }
    return i;
  }

  private static int skipSpace(String s, int i) {
    return SqlClassifier.skipNoise(s, i);
  }
}
