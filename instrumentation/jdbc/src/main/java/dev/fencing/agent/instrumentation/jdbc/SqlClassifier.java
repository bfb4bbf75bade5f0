package dev.fencing.agent.instrumentation.jdbc;

/**
 * Read or write, from the SQL text: a cheap scan of the first keyword. Anything not recognised as a read is a write
 * (docs/DESIGN.md section 4), so an unknown statement is fenced rather than let through. Transaction control and session
 * statements are neither: they are never blocked, and they carry no token.
 */
public final class SqlClassifier {
  /** What a statement is, for the policy. */
  public enum Kind { READ, WRITE, CONTROL }

  private SqlClassifier() {}

  public static boolean isWrite(String sql) {
    return classify(sql) == Kind.WRITE;
  }

  /**
   * As {@link #classify(String)}, for a text that may hold several statements ({@code SET ...; UPDATE ...}: a write if
   * any of them is) and may name functions declared as writing ({@code fencing.jdbc.write-functions}: a read that
   * names one is a write).
   */
  public static Kind classify(String sql, String[] writeFunctions) {
    Kind k = classify(sql);
    if (k != Kind.WRITE && sql != null && SqlTarget.hasSecondStatement(sql, 0)) {
      k = Kind.WRITE; // a text of several statements: one may write, and no single keyword tells
    }
    if (k == Kind.READ && writeFunctions.length > 0) {
      for (String f : writeFunctions) {
        if (containsCode(sql, 0, f)) {
          return Kind.WRITE;
        }
      }
    }
    return k;
  }

  /** The statement's first keyword is {@code word} (after comments and spaces). */
  static boolean startsWithWord(String sql, String word) {
    return word(sql, skipNoise(sql, 0), word);
  }

  /** COMMIT [WORK|TRANSACTION] or END (PostgreSQL): transaction control that makes the transaction's writes visible. */
  static boolean isCommit(String sql) {
    int i = skipNoise(sql, 0);
    return word(sql, i, "COMMIT") && !containsWord(sql, i, "PREPARED") || word(sql, i, "END");
  }

  /**
   * A PostgreSQL statement that cannot run inside a transaction block (SQLSTATE 25001 there): {@code VACUUM},
   * {@code CREATE/DROP INDEX CONCURRENTLY}, {@code REINDEX ... CONCURRENTLY} and {@code REINDEX DATABASE/SYSTEM},
   * {@code CREATE/DROP/ALTER DATABASE}, {@code TABLESPACE} and {@code SUBSCRIPTION}, {@code ALTER SYSTEM}. Behind a
   * transaction pooler the hook must not give it a transaction of its own. Errs toward "no": such a statement wrapped
   * fails, as it would inside the application's own transaction.
   */
  static boolean runsOutsideTransactions(String sql) {
    if (sql == null) {
      return false;
    }
    int i = skipNoise(sql, 0);
    if (word(sql, i, "VACUUM")) {
      return true;
    }
    boolean create = word(sql, i, "CREATE");
    boolean drop = word(sql, i, "DROP");
    boolean alter = word(sql, i, "ALTER");
    boolean reindex = word(sql, i, "REINDEX");
    if (!create && !drop && !alter && !reindex) {
      return false;
    }
    int next = skipNoise(sql, i + (create || reindex ? 7 : drop ? 4 : 5));
    if (reindex) {
      return word(sql, next, "DATABASE") || word(sql, next, "SYSTEM") || containsCode(sql, next, "CONCURRENTLY");
    }
    if (word(sql, next, "DATABASE") || word(sql, next, "TABLESPACE") || word(sql, next, "SUBSCRIPTION")) {
      return true;
    }
    if (alter) {
      return word(sql, next, "SYSTEM");
    }
    return containsCode(sql, next, "CONCURRENTLY") && (word(sql, next, "INDEX")
        || word(sql, next, "UNIQUE") && word(sql, skipNoise(sql, next + 6), "INDEX"));
  }

  /**
   * A session statement that may change where unqualified table names resolve: PostgreSQL's
   * {@code SET [SESSION|LOCAL] search_path}, {@code SET SCHEMA}, {@code RESET search_path|ALL}; MySQL/MariaDB's
   * {@code USE db}; H2's {@code SET SCHEMA}.
   */
  static boolean switchesSchema(String sql) {
    if (sql == null) {
      return false;
    }
    int i = skipNoise(sql, 0);
    if (word(sql, i, "USE")) {
      return true;
    }
    if (word(sql, i, "RESET")) {
      return containsWord(sql, i, "search_path") || containsWord(sql, i, "ALL");
    }
    if (!word(sql, i, "SET")) {
      return false;
    }
    int next = skipNoise(sql, i + 3);
    if (word(sql, next, "SESSION") || word(sql, next, "LOCAL")) {
      next = skipNoise(sql, next + (word(sql, next, "LOCAL") ? 5 : 7));
    }
    return word(sql, next, "SCHEMA") || word(sql, next, "search_path");
  }

  /** ROLLBACK [WORK|TRANSACTION] (not ROLLBACK TO SAVEPOINT, which keeps the transaction). */
  static boolean isRollback(String sql) {
    int i = skipNoise(sql, 0);
    return word(sql, i, "ROLLBACK") && !containsWord(sql, i, "TO");
  }

  public static Kind classify(String sql) {
    if (sql == null) {
      return Kind.WRITE;
    }
    int i = skipNoise(sql, 0);
    if (i >= sql.length()) {
      return Kind.WRITE;
    }
    // Dispatch on the first letter, so a statement is compared with the one to five keywords that start with it, not
    // all of them: on the plain-statement path this scan is the hook's cost beyond the prepared path (BENCHMARKS.md).
    // `| 0x20` folds ASCII case; word() still decides with a case-insensitive compare. Word tests are in place
    // (regionMatches): classifying a statement allocates nothing.
    switch (sql.charAt(i) | 0x20) {
      case 's':
        if (word(sql, i, "SELECT")) {
          // SELECT ... INTO new_table creates a table (PostgreSQL, H2); SELECT ... INTO @var is MySQL-only and
          // harmless, but rare enough to treat the whole form as a write.
          return containsCode(sql, i, "INTO") ? Kind.WRITE : Kind.READ;
        }
        if (word(sql, i, "SHOW")) {
          return Kind.READ;
        }
        return word(sql, i, "START") || word(sql, i, "SAVEPOINT") || word(sql, i, "SET") ? Kind.CONTROL : Kind.WRITE;
      case 'd':
        return word(sql, i, "DESCRIBE") || word(sql, i, "DESC") ? Kind.READ : Kind.WRITE;
      case 'v':
        return word(sql, i, "VALUES") ? Kind.READ : Kind.WRITE;
      case 't':
        return word(sql, i, "TABLE") ? Kind.READ : Kind.WRITE;
      case 'e':
        if (word(sql, i, "EXPLAIN")) {
          return containsCode(sql, i, "ANALYZE") ? Kind.WRITE : Kind.READ; // EXPLAIN ANALYZE executes the statement
        }
        return word(sql, i, "END") ? Kind.CONTROL : Kind.WRITE;
      case 'w':
        if (word(sql, i, "WITH")) {
          // A CTE is a read unless one of its parts modifies data.
          return containsCode(sql, i, "INSERT") || containsCode(sql, i, "UPDATE") || containsCode(sql, i, "DELETE")
              || containsCode(sql, i, "MERGE") ? Kind.WRITE : Kind.READ;
        }
        return Kind.WRITE;
      case 'b':
        return word(sql, i, "BEGIN") ? Kind.CONTROL : Kind.WRITE;
      case 'c':
        return word(sql, i, "COMMIT") ? Kind.CONTROL : Kind.WRITE;
      case 'r':
        return word(sql, i, "ROLLBACK") || word(sql, i, "RELEASE") || word(sql, i, "RESET") ? Kind.CONTROL
            : Kind.WRITE;
      case 'u':
        return word(sql, i, "USE") ? Kind.CONTROL : Kind.WRITE;
      default:
        return Kind.WRITE;
    }
  }

  /** {@code word} at {@code i}, ignoring case, followed by a non-letter. */
  private static boolean word(String s, int i, String word) {
    int end = i + word.length();
    // First letter before regionMatches: a cheap reject. `| 0x20` folds ASCII case; it is only a pre-filter (it also
    // keeps non-ASCII letters that upper-case to ASCII, such as U+017F, from matching), regionMatches decides.
    return i < s.length() && (s.charAt(i) | 0x20) == (word.charAt(0) | 0x20)
        && s.regionMatches(true, i, word, 0, word.length()) && (end == s.length() || !Character.isLetter(s.charAt(end)));
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

  /**
   * {@link #containsWord}, where a match inside a string literal, a quoted identifier or a comment does not count: a
   * read whose text quotes a keyword (pgjdbc's {@code getSQLKeywords()} lists {@code into} in an array literal) stays a
   * read. Errs toward write: each literal is read both with and without backslash escapes (MySQL, PostgreSQL's
   * {@code E''}), and the word counts when either reading finds it outside; a text with dollar quoting (PostgreSQL) or
   * an unterminated quote counts every match. A text without the word costs the one plain scan.
   */
  static boolean containsCode(String s, int from, String word) {
    if (!containsWord(s, from, word)) {
      return false;
    }
    if (s.indexOf('$', from) >= 0) {
      return true;
    }
    return containsOutsideQuotes(s, from, word, false) || containsOutsideQuotes(s, from, word, true);
  }

  private static boolean containsOutsideQuotes(String s, int from, String word, boolean backslashEscapes) {
    int n = s.length();
    for (int i = from; i < n; i++) {
      int end = endOfQuoteOrComment(s, i, backslashEscapes);
      if (end < 0) {
        return true; // unterminated: cannot tell
      }
      if (end != i) {
        i = end;
      } else if (wordAt(s, i, word)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Where the quoted text ({@code '...'}, {@code "..."}, {@code `...`}; with {@code backslashEscapes} a backslash
   * escapes the next character) or the comment starting at {@code i} ends: its last character's index (the end of
   * the text for a comment that runs to it); {@code i} when none starts there; -1 for a quote never closed.
   */
  static int endOfQuoteOrComment(String s, int i, boolean backslashEscapes) {
    int n = s.length();
    char c = s.charAt(i);
    if (c == '\'' || c == '"' || c == '`') {
      int j = i + 1;
      while (j < n && s.charAt(j) != c) {
        j += backslashEscapes && s.charAt(j) == '\\' ? 2 : 1;
      }
      return j >= n ? -1 : j;
    }
    if (c == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
      int eol = s.indexOf('\n', i);
      return eol < 0 ? n : eol;
    }
    if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
      int end = s.indexOf("*/", i + 2);
      return end < 0 ? n : end + 1;
    }
    return i;
  }

  /** {@code word} at {@code i}, ignoring case, as a whole word. */
  private static boolean wordAt(String s, int i, String word) {
    int w = word.length();
    return i + w <= s.length() && s.regionMatches(true, i, word, 0, w)
        && (i == 0 || !Character.isLetterOrDigit(s.charAt(i - 1)) && s.charAt(i - 1) != '_')
        && (i + w == s.length() || !Character.isLetterOrDigit(s.charAt(i + w)) && s.charAt(i + w) != '_');
  }

  /** A whole word anywhere after {@code from}, ignoring case (string literals are not parsed: errs toward write). */
  static boolean containsWord(String s, int from, String word) {
    int n = s.length();
    int w = word.length();
    for (int i = from; i + w <= n; i++) {
      if (wordAt(s, i, word)) {
        return true;
      }
    }
    return false;
  }
}
